//! The server side of `kahuna.v1.RefereeService/Play` (proto/kahuna/v1/referee.proto),
//! with a pass-through codec: messages stay the bytes Python encodes and parses.

fn main() {
    let play = tonic_build::manual::Method::builder()
        .name("play")
        .route_name("Play")
        .input_type("bytes::Bytes")
        .output_type("bytes::Bytes")
        .codec_path("crate::RawCodec")
        .client_streaming()
        .server_streaming()
        .build();
    let service = tonic_build::manual::Service::builder()
        .name("RefereeService")
        .package("kahuna.v1")
        .method(play)
        .build();
    tonic_build::manual::Builder::new()
        .build_client(false)
        .compile(&[service]);
}
