//! A durable crawl from Rust: stop it, or kill it at any moment (kill -9 too), and run it
//! again: it resumes where its last commit left it, and every page is in the output once.
//!
//! ```sh
//! kumo testsite --pages 2000 --port 8000 &
//! cargo run --example durable -- http://127.0.0.1:8000/index.html
//! ```
//!
//! Arguments: the start URL, the state directory (`durable-state`) and the output file
//! (`pages.jsonl`).

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let start = args.next().unwrap_or_else(|| "http://127.0.0.1:8000/index.html".into());
    let state = args.next().unwrap_or_else(|| "durable-state".into());
    let output = args.next().unwrap_or_else(|| "pages.jsonl".into());

    let summary = kumo::Crawler::new([start])
        .set("delay", "10ms")?
        .store(kumo::Store::dir(state))
        .output(output)
        .run()
        .await?;
    eprintln!("{summary}");
    Ok(())
}
