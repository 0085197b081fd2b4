//! A referee's bot-facing transport in compiled code, for `benchmarks/transport_floor.py`.
//!
//! `Transport(paths, on_hello, match_over)` serves `kahuna.v1.RefereeService/Play` (tonic,
//! HTTP/2 by h2) on one Unix socket per path, on a tokio runtime of one thread of its own
//! (`rust-transport`). Messages are opaque bytes (`RawCodec`): Python encodes every request
//! and reads every reply. Each stream's first message (the Hello) goes to `on_hello(bytes)`,
//! which names the stream's seat; each later message goes to the `on_reply(seat, bytes)`
//! given to `run`, with the GIL taken, in the runtime's thread. `on_reply` returns what to
//! write next: a `(seat, bytes)` pair, a list of them, or None to end the match (every
//! stream is then sent `match_over` and closed); it may also call `send(seat, bytes)`.
//! Python's threads hold no GIL while they wait (`wait_hellos`, `run`, `close`).

use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::UnboundedReceiverStream;
use tokio_stream::Stream;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Request, Response, Status, Streaming};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/kahuna.v1.RefereeService.rs"));
}
use generated::referee_service_server::{RefereeService, RefereeServiceServer};

// ---------------------------------------------------------------- the pass-through codec

/// Messages as their bytes: nothing encoded or parsed here.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCodec;

#[derive(Debug, Clone, Copy, Default)]
pub struct RawEncoder;

#[derive(Debug, Clone, Copy, Default)]
pub struct RawDecoder;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;

    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }

    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

impl Encoder for RawEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        let remaining = src.remaining();
        Ok(Some(src.copy_to_bytes(remaining)))
    }
}

// ---------------------------------------------------------------- the shared state

type Frame = Result<Bytes, Status>;

#[derive(Default)]
struct State {
    hellos: usize,
    over: bool,
    error: Option<String>,
}

struct Shared {
    on_hello: Py<PyAny>,
    on_reply: Mutex<Option<Py<PyAny>>>,
    match_over: Bytes,
    outboxes: Mutex<Vec<Option<mpsc::UnboundedSender<Frame>>>>,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn update(&self, change: impl FnOnce(&mut State)) {
        change(&mut self.state.lock().unwrap());
        self.changed.notify_all();
    }

    fn send(&self, seat: usize, frame: Bytes) -> Result<(), String> {
        let outboxes = self.outboxes.lock().unwrap();
        match outboxes.get(seat).and_then(Option::as_ref) {
            Some(outbox) => outbox
                .send(Ok(frame))
                .map_err(|_| format!("seat {seat}: stream gone")),
            None => Err(format!("seat {seat}: no stream")),
        }
    }

    /// Every stream sent `match_over` and closed; `run` returns.
    fn end_match(&self, error: Option<String>) {
        let mut outboxes = self.outboxes.lock().unwrap();
        for outbox in outboxes.iter_mut() {
            if let Some(outbox) = outbox.take() {
                let _ = outbox.send(Ok(self.match_over.clone()));
            }
        }
        drop(outboxes);
        self.update(|state| {
            state.over = true;
            if state.error.is_none() {
                state.error = error;
            }
        });
    }

    /// The frames `on_reply` returned, written; false once the match is over.
    fn write_returned(&self, returned: &Bound<'_, PyAny>) -> Result<bool, String> {
        if returned.is_none() {
            return Ok(false);
        }
        if let Ok(list) = returned.cast::<PyList>() {
            for item in list.iter() {
                self.write_pair(&item)?;
            }
            return Ok(true);
        }
        self.write_pair(returned)?;
        Ok(true)
    }

    fn write_pair(&self, pair: &Bound<'_, PyAny>) -> Result<(), String> {
        let pair = pair
            .cast::<PyTuple>()
            .map_err(|_| "on_reply: not a (seat, bytes) pair".to_string())?;
        let seat: usize = pair
            .get_item(0)
            .and_then(|s| s.extract())
            .map_err(|e| e.to_string())?;
        let raw = pair.get_item(1).map_err(|e| e.to_string())?;
        let raw = raw
            .cast::<PyBytes>()
            .map_err(|_| "on_reply: frame not bytes".to_string())?;
        self.send(seat, Bytes::copy_from_slice(raw.as_bytes()))
    }

    /// One reply of `seat`: the Python turn, with the GIL taken.
    fn settle(&self, seat: usize, raw: &[u8]) -> Result<bool, String> {
        Python::attach(|py| {
            let on_reply = self
                .on_reply
                .lock()
                .unwrap()
                .as_ref()
                .map(|f| f.clone_ref(py));
            let Some(on_reply) = on_reply else {
                return Err(format!("seat {seat}: a reply before the match began"));
            };
            let returned = on_reply
                .call1(py, (seat, PyBytes::new(py, raw)))
                .map_err(|error| {
                    error.print(py);
                    format!("on_reply raised: {error}")
                })?;
            self.write_returned(returned.bind(py))
        })
    }
}

// ---------------------------------------------------------------- the service

struct Service {
    shared: Arc<Shared>,
}

type PlayStream = Pin<Box<dyn Stream<Item = Frame> + Send + 'static>>;

#[tonic::async_trait]
impl RefereeService for Service {
    type PlayStream = PlayStream;

    async fn play(
        &self,
        request: Request<Streaming<Bytes>>,
    ) -> Result<Response<PlayStream>, Status> {
        let mut replies = request.into_inner();
        let hello = replies
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("no Hello"))?;
        let shared = self.shared.clone();
        let seat = Python::attach(|py| -> PyResult<usize> {
            shared
                .on_hello
                .call1(py, (PyBytes::new(py, &hello),))?
                .extract(py)
        })
        .map_err(|error| Status::invalid_argument(format!("Hello: {error}")))?;
        let (outbox, frames) = mpsc::unbounded_channel();
        {
            let mut outboxes = shared.outboxes.lock().unwrap();
            if seat >= outboxes.len() {
                outboxes.resize_with(seat + 1, || None);
            }
            if outboxes[seat].is_some() {
                return Err(Status::already_exists("one Play stream per seat"));
            }
            outboxes[seat] = Some(outbox);
        }
        tokio::spawn(read(seat, replies, shared.clone()));
        shared.update(|state| state.hellos += 1);
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(
            frames,
        ))))
    }
}

/// A stream's replies, each settled as it is read.
async fn read(seat: usize, mut replies: Streaming<Bytes>, shared: Arc<Shared>) {
    loop {
        match replies.message().await {
            Ok(Some(raw)) => match shared.settle(seat, &raw) {
                Ok(true) => {}
                Ok(false) => shared.end_match(None),
                Err(error) => shared.end_match(Some(error)),
            },
            Ok(None) => return,
            Err(status) => {
                if !shared.state.lock().unwrap().over {
                    shared.end_match(Some(format!("seat {seat}: stream broke: {status}")));
                }
                return;
            }
        }
    }
}

// ---------------------------------------------------------------- Python's handle

#[pyclass]
struct Transport {
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn wait_for(
    py: Python<'_>,
    shared: &Shared,
    timeout_s: f64,
    done: impl Fn(&State) -> bool + Send + Sync,
) -> PyResult<()> {
    let outcome = py.detach(|| {
        let state = shared.state.lock().unwrap();
        let (state, _) = shared
            .changed
            .wait_timeout_while(state, Duration::from_secs_f64(timeout_s), |state| {
                !done(state)
            })
            .unwrap();
        (done(&state), state.error.clone())
    });
    match outcome {
        (_, Some(error)) => Err(PyRuntimeError::new_err(error)),
        (true, None) => Ok(()),
        (false, None) => Err(PyRuntimeError::new_err(format!(
            "timed out after {timeout_s} s"
        ))),
    }
}

#[pymethods]
impl Transport {
    /// Serve every path of `paths` (Unix sockets) from a runtime thread of its own.
    #[new]
    fn new(
        py: Python<'_>,
        paths: Vec<String>,
        on_hello: Py<PyAny>,
        match_over: Vec<u8>,
    ) -> PyResult<Self> {
        let shared = Arc::new(Shared {
            on_hello,
            on_reply: Mutex::new(None),
            match_over: Bytes::from(match_over),
            outboxes: Mutex::new(Vec::new()),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let (bound, bound_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let served = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rust-transport".into())
            .spawn(move || serve(paths, served, bound, stopped))
            .map_err(|error| PyRuntimeError::new_err(error.to_string()))?;
        let bound = py.detach(move || bound_rx.recv());
        match bound {
            Ok(Ok(())) => Ok(Transport {
                shared,
                stop: Some(stop),
                thread: Some(thread),
            }),
            Ok(Err(error)) => Err(PyRuntimeError::new_err(error)),
            Err(_) => Err(PyRuntimeError::new_err("the transport's thread died")),
        }
    }

    /// Wait (the GIL released) until `count` streams have said Hello.
    fn wait_hellos(&self, py: Python<'_>, count: usize, timeout_s: f64) -> PyResult<()> {
        wait_for(py, &self.shared, timeout_s, |state| state.hellos >= count)
    }

    /// Write `first` to `seat`'s stream, then settle every reply with `on_reply` until it
    /// returns None; returns then (the GIL released meanwhile).
    fn run(
        &self,
        py: Python<'_>,
        seat: usize,
        first: &[u8],
        on_reply: Py<PyAny>,
        timeout_s: f64,
    ) -> PyResult<()> {
        *self.shared.on_reply.lock().unwrap() = Some(on_reply);
        self.shared
            .send(seat, Bytes::copy_from_slice(first))
            .map_err(PyValueError::new_err)?;
        wait_for(py, &self.shared, timeout_s, |state| state.over)
    }

    /// Queue `frame` on `seat`'s stream (from `on_reply`, or any thread).
    fn send(&self, seat: usize, frame: &[u8]) -> PyResult<()> {
        self.shared
            .send(seat, Bytes::copy_from_slice(frame))
            .map_err(PyValueError::new_err)
    }

    /// Stop serving and join the runtime's thread.
    fn close(&mut self, py: Python<'_>) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            py.detach(|| {
                let _ = thread.join();
            });
        }
        *self.shared.on_reply.lock().unwrap() = None;
    }
}

fn serve(
    paths: Vec<String>,
    shared: Arc<Shared>,
    bound: std::sync::mpsc::Sender<Result<(), String>>,
    stopped: oneshot::Receiver<()>,
) {
    // The thread's Python thread state, made once and kept (the GIL released) for the
    // thread's life: each callback then only takes the GIL. Without it every `attach`
    // makes a thread state and frees it again (`KAHUNA_TRANSPORT_FRESH_TSTATE=1`).
    let kept = std::env::var_os("KAHUNA_TRANSPORT_FRESH_TSTATE")
        .is_none()
        .then(|| unsafe {
            let gil = pyo3::ffi::PyGILState_Ensure();
            (gil, pyo3::ffi::PyEval_SaveThread())
        });
    serve_on_runtime(paths, shared, bound, stopped);
    if let Some((gil, saved)) = kept {
        unsafe {
            pyo3::ffi::PyEval_RestoreThread(saved);
            pyo3::ffi::PyGILState_Release(gil);
        }
    }
}

fn serve_on_runtime(
    paths: Vec<String>,
    shared: Arc<Shared>,
    bound: std::sync::mpsc::Sender<Result<(), String>>,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = bound.send(Err(error.to_string()));
            return;
        }
    };
    runtime.block_on(async move {
        let mut servers = Vec::new();
        for path in &paths {
            let listener = match tokio::net::UnixListener::bind(path) {
                Ok(listener) => listener,
                Err(error) => {
                    let _ = bound.send(Err(format!("{path}: {error}")));
                    return;
                }
            };
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
            let service = RefereeServiceServer::new(Service {
                shared: shared.clone(),
            });
            servers.push(tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(service)
                    .serve_with_incoming(incoming),
            ));
        }
        let _ = bound.send(Ok(()));
        let _ = stopped.await;
        for server in servers {
            server.abort();
        }
    });
}

#[pymodule]
fn kahuna_transport(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Transport>()?;
    Ok(())
}
