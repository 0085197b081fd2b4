// Generates the Rust code for proto/ at build time (prost messages and the tonic
// client), with the protoc binary that the protoc-bin-vendored crate ships.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure()
        .build_server(false)
        .compile_protos(&["proto/kahuna/v1/referee.proto"], &["proto"])?;
    Ok(())
}
