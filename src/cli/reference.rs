//! The reference pages in `docs/guide/reference/`, generated from what they describe: the
//! command line from clap's definitions, the crawl settings from kumo-settings' table; and the
//! spider files' JSON Schema (`docs/spider.schema.json`) from the structs that read them.
//! A test regenerates both and fails when a page was stale, so a changed flag or setting cannot
//! leave its documentation behind (rust-analyzer's generated docs are the model).

use std::fmt::Write;

use clap::CommandFactory;
use kumo_settings::{COMMAND_ONLY, Kind, Resume, SETTINGS, Setting};

use super::args::Cli;

mod spider_file;

/// `docs/guide/reference/cli.md`: every command's `--help`, as the command prints it.
pub(super) fn cli_reference() -> String {
    let mut out = String::from(
        "# Command-line reference\n\n<!-- Generated from the flag definitions by \
         src/cli/reference.rs: run `cargo test --bin kumo reference` after a change. -->\n\n\
         Every command's `--help`, as it prints it. A crawl setting's flag is also a \
         [spider-file key](settings.md).\n",
    );
    let mut cli = Cli::command();
    cli.build();
    command_help(&mut cli, &mut Vec::new(), &mut out);
    out
}

/// One command's help, then its subcommands' (not the built-in `help`), depth first.
fn command_help(cmd: &mut clap::Command, path: &mut Vec<String>, out: &mut String) {
    path.push(cmd.get_name().to_string());
    let help = cmd.render_long_help().to_string();
    let heading = "#".repeat(path.len().min(3) + 1);
    let _ = write!(out, "\n{heading} `{}`\n\n```text\n{}\n```\n", path.join(" "), stable(&help));
    for sub in cmd.get_subcommands_mut().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        command_help(sub, path, out);
    }
    path.pop();
}

/// Help text without what the machine it runs on would put in: an environment variable's
/// value; and without trailing blanks.
fn stable(help: &str) -> String {
    let lines = help.lines().map(|line| {
        let mut line = line.trim_end().to_string();
        if let Some(at) = line.find("[env: ")
            && let (Some(eq), Some(end)) = (line[at..].find('='), line[at..].find(']'))
            && eq < end
        {
            line.replace_range(at + eq + 1..at + end, "");
        }
        line
    });
    lines.collect::<Vec<_>>().join("\n").trim_end().to_string()
}

/// `docs/guide/reference/settings.md`: every crawl setting of the table, by group.
pub(super) fn settings_reference() -> String {
    let mut out = String::from(
        "# Settings reference\n\n<!-- Generated from kumo-settings' table \
         (crates/kumo-settings/src/entries.rs) by src/cli/reference.rs: run \
         `cargo test --bin kumo reference` after a change. -->\n\n\
         Every crawl setting is a key of a spider file (crawl-wide at the top, or in a \
         `[[site]]` table for that site) and a flag of `kumo crawl`: the key with `-` for `_`. \
         Layers stack: defaults, then the file's crawl-wide keys, then the site's, then the \
         library's calls, then flags. *On resume* says whether a resumed crawl may take another \
         value (*free*) or refuses one (*fixed*: the stored frontier was built with the old).\n",
    );
    let mut groups = Vec::new();
    for s in SETTINGS {
        if !groups.contains(&s.group) {
            groups.push(s.group);
        }
    }
    for group in groups {
        let _ =
            write!(out, "\n## {}\n\n| key | value | default | on resume | what it does |\n", group.title());
        out.push_str("|---|---|---|---|---|\n");
        for s in SETTINGS.iter().filter(|s| s.group == group) {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                s.name,
                value(s),
                if s.default.is_empty() { "unset".to_string() } else { format!("`{}`", s.default) },
                if s.resume == Resume::Free { "free" } else { "fixed" },
                cell(&notes(s)),
            );
        }
    }
    out.push_str(
        "\n## Options that are not spider-file keys\n\nThese `kumo crawl` options belong to \
         the command, not to a crawl's settings:\n\n| flag | why |\n|---|---|\n",
    );
    for (flag, why) in COMMAND_ONLY {
        let _ = writeln!(out, "| `--{flag}` | {} |", cell(why));
    }
    out
}

/// A setting's value as a spider file writes it, with its bounds.
fn value(s: &Setting) -> String {
    match s.kind {
        Kind::Count { min, max } if max == u64::MAX => format!("whole number ≥ {min}"),
        Kind::Count { min, max } => format!("whole number, {min} to {max}"),
        Kind::Number { min, max } => format!("number, {min} to {max}"),
        Kind::Duration { positive, .. } => {
            format!("duration{}", if positive { " > 0" } else { "" })
        }
        Kind::Switch => "`true`/`false`".into(),
        Kind::Text => "string".into(),
        Kind::List => "list of strings".into(),
    }
}

/// The doc line, then the rules between settings and the old spellings still read.
fn notes(s: &Setting) -> String {
    let mut text = s.doc.to_string();
    if let Some(needs) = s.requires {
        let _ = write!(text, " Needs `{needs}`.");
    }
    if !s.conflicts.is_empty() {
        let names: Vec<String> = s.conflicts.iter().map(|c| format!("`{c}`")).collect();
        let _ = write!(text, " Not with {}.", names.join(", "));
    }
    let old: Vec<String> = s.old.iter().filter_map(|o| o.key.or(o.flag)).map(|k| format!("`{k}`")).collect();
    if !old.is_empty() {
        let _ = write!(text, " Formerly {}.", old.join(", "));
    }
    text
}

/// Text that is safe in a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use kumo_spider::{LoadOptions, SpiderFile};
    use serde_json::Value;

    const SCHEMA: &str = "docs/spider.schema.json";

    /// Writes `text` to `path` below the repository's root, and says whether it held something
    /// else: the test command then fails on a page a change left stale, and a second run passes
    /// with the page regenerated for review.
    fn regenerated(path: &str, text: &str) -> bool {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        if std::fs::read_to_string(&file).is_ok_and(|old| old == text) {
            return false;
        }
        std::fs::write(&file, text).expect("write the generated page");
        true
    }

    #[test]
    fn reference_pages_match_the_definitions() {
        let cli = super::cli_reference();
        assert!(cli.contains("## `kumo crawl`"), "the crawl command is documented");
        assert!(cli.contains("--user-agent"), "the crawl flags are documented");
        let settings = super::settings_reference();
        assert!(settings.contains("| `user_agent` |"), "the settings are documented");
        let schema_value = kumo_spider::spider_file_schema();
        let spider_file = super::spider_file::spider_file_reference(&schema_value);
        assert!(spider_file.contains("## `[[site]]`"), "the site table is documented");
        let schema = serde_json::to_string_pretty(&schema_value).expect("JSON") + "\n";
        let stale: Vec<&str> = [
            ("docs/guide/reference/cli.md", cli),
            ("docs/guide/reference/settings.md", settings),
            ("docs/guide/reference/spider-file.md", spider_file),
            (SCHEMA, schema),
        ]
        .iter()
        .filter(|(path, text)| regenerated(path, text))
        .map(|(path, _)| *path)
        .collect();
        assert!(stale.is_empty(), "stale, now regenerated (review and commit them): {}", stale.join(", "));
    }

    /// The schema as the tests check files against it: the generated one, not the tracked
    /// copy (which the test above holds equal to it).
    fn validator() -> jsonschema::Validator {
        jsonschema::draft7::new(&kumo_spider::spider_file_schema()).expect("the schema is valid draft 7")
    }

    /// Every spider file of the repository (the examples, the test data, the benchmark's).
    fn spider_files() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<PathBuf> = ["examples", "testdata", "bench/peers/kumo"]
            .into_iter()
            .flat_map(|dir| walkdir::WalkDir::new(root.join(dir)))
            .map(|entry| entry.expect("read a directory"))
            .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "toml"))
            .map(walkdir::DirEntry::into_path)
            .collect();
        files.sort();
        files
    }

    /// A spider file's TOML as the JSON value a schema validator reads.
    fn as_json(text: &str) -> Value {
        let toml: toml::Value = toml::from_str(text).expect("TOML");
        serde_json::to_value(toml).expect("JSON")
    }

    #[test]
    fn the_schema_takes_every_spider_file_of_the_repository() {
        let validator = validator();
        let files = spider_files();
        assert!(files.len() >= 3, "the spider files were found: {files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).expect("read a spider file");
            SpiderFile::parse(&text, "file.toml", &LoadOptions::default()).expect("the loader takes it");
            let file = as_json(&text);
            let errors: Vec<String> = validator.iter_errors(&file).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{}: {}", path.display(), errors.join("; "));
        }
    }

    #[test]
    fn the_schema_refuses_an_unknown_key_where_the_loader_does() {
        let validator = validator();
        let good = "delay = \"250ms\"\n[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:9/\"]\nper_host = 2\n\
                    [[site.limit]]\nhost = \"*.example\"\nper_host = 1\n\
                    [[site.model]]\nname = \"m\"\nfields = [{ name = \"t\", css = \"title\" }]\n";
        // (The limit rule leaves out `delay`, which a schema once required.)
        assert!(validator.is_valid(&as_json(good)), "a file with settings, a limit and a model is valid");
        SpiderFile::parse(good, "good.toml", &LoadOptions::default()).expect("the loader takes it too");
        let bad = [
            ("at the top", good.replace("delay =", "colour = 1\ndelay =")),
            ("in a site", good.replace("per_host = 2", "per_host = 2\ncolour = 1")),
            ("in a model", good.replace("name = \"m\"", "name = \"m\"\ncolour = 1")),
            ("in a field", good.replace("css = \"title\"", "css = \"title\", colour = 1")),
            ("a setting of the wrong type", good.replace("per_host = 2", "per_host = \"two\"")),
        ];
        for (place, text) in bad {
            assert!(!validator.is_valid(&as_json(&text)), "{place}: the schema refuses it");
            assert!(
                SpiderFile::parse(&text, "bad.toml", &LoadOptions::default()).is_err(),
                "{place}: the loader refuses it too"
            );
        }
    }
}
