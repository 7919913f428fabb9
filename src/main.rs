//! The `kumo` command: a thin shell over the library crates.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
