//! rust_random: a Kahuna Arena bot in Rust that plays a uniformly random legal action.
//!
//! Put your own logic in `choose`. The module `kahuna` (src/kahuna.rs) does the
//! protocol: it connects to the referee, says Hello, calls `choose` for every
//! request with the observation as Rust values, replies with the request's id
//! and returns once the match is over.

mod kahuna;

use kahuna::{Action, Observation};

/// Returns one of `legal` (sorted by text notation, never empty). `obs` has your
/// hand, the board, the face-up row, the whole game's history and your clock:
/// reply before `obs.clock.deadline()`.
fn choose(obs: &Observation, legal: &[Action]) -> Action {
    // Reproducible: seeded by KAHUNA_RANDOM_SEED, the game and the events seen.
    let seed = std::env::var("KAHUNA_RANDOM_SEED").unwrap_or_default();
    let mut state = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    state ^= (u64::from(obs.game_index) << 32) | obs.history.len() as u64;
    legal[(splitmix64(&mut state) % legal.len() as u64) as usize].clone()
}

/// A small, good pseudo-random generator (Steele, Lea and Flood's SplitMix64).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn main() -> std::process::ExitCode {
    kahuna::run("rust_random", choose)
}
