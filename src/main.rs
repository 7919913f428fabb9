//! The `kumo` command: a thin shell over the library crates.

mod cli;

// mimalloc: the crawl allocates many small short-lived objects (URLs, requests, records) across
// threads; it spends markedly less CPU on that than the system allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
