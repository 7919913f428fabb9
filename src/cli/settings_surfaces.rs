//! Every setting of the table exists on both surfaces: a flag of `kumo crawl` and a
//! spider-file key, giving the same resolved crawl; every other `kumo crawl` option says why a
//! spider file has no key for it.

use clap::{CommandFactory, Parser};
use kumo_settings::{COMMAND_ONLY, Kind, SETTINGS, Setting};
use kumo_spider::{LoadOptions, SpiderFile};

use super::args::{Cli, Command};
use super::crawl::{parse_seeds, plan_from_args};

const SEED: &str = "http://127.0.0.1:9/";

/// A value other than the default, valid for the setting, as flag text and as TOML.
fn sample(s: &Setting) -> (Vec<String>, String) {
    let item = match s.name {
        "allow_domain" => "example.org",
        "allow" => "*/docs/*",
        "deny" => "*logout*",
        "sitemap" => "http://127.0.0.1:9/sitemap.xml",
        "strip_param" => "ref",
        "rate_limit" => "10/s",
        "proxy" => "http://127.0.0.1:3128",
        "dns_server" => "127.0.0.1:5353",
        "resolve" => "shop.kumo.test=127.0.0.2",
        _ => "kumo-test/1",
    };
    match s.kind {
        Kind::Switch => (vec![format!("--{}", s.flag())], "true".into()),
        Kind::Count { .. } => (vec![format!("--{}", s.flag()), "3".into()], "3".into()),
        Kind::Number { .. } => (vec![format!("--{}", s.flag()), "2.5".into()], "2.5".into()),
        Kind::Duration { .. } => (vec![format!("--{}", s.flag()), "7s".into()], "\"7s\"".into()),
        Kind::Text => (vec![format!("--{}", s.flag()), item.into()], format!("{item:?}")),
        Kind::List => (vec![format!("--{}", s.flag()), item.into()], format!("[{item:?}]")),
    }
}

/// The crawl `kumo crawl SEED FLAGS…` resolves to, as text.
fn from_flags(flags: &[String]) -> String {
    let argv = ["kumo", "crawl", SEED].into_iter().map(String::from).chain(flags.iter().cloned());
    let Command::Crawl(a) = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{flags:?}: {e}")).command
    else {
        unreachable!("a crawl")
    };
    format!("{:?}", plan_from_args(&a, &parse_seeds(&a.urls).unwrap()).unwrap().config)
}

/// The crawl a spider file with these lines in its `[[site]]` resolves to, as text.
fn from_file(lines: &str) -> String {
    let text = format!("[[site]]\nname = \"s\"\nseeds = [\"{SEED}\"]\n{lines}\n");
    let file = SpiderFile::parse(&text, "t.toml", &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    format!("{:?}", file.sites[0].crawl)
}

#[test]
fn every_setting_has_a_flag_and_a_key_that_resolve_alike() {
    let (defaults_flags, defaults_file) = (from_flags(&[]), from_file(""));
    assert_eq!(defaults_flags, defaults_file, "the same defaults on both surfaces");
    for s in SETTINGS {
        let (mut flags, toml) = sample(s);
        let mut lines = format!("{} = {toml}", s.name);
        // A setting that needs a switch gets it on both surfaces.
        if let Some(needs) = s.requires {
            flags.push(format!("--{}", needs.replace('_', "-")));
            lines.push_str(&format!("\n{needs} = true"));
        }
        let by_flag = from_flags(&flags);
        assert_ne!(by_flag, defaults_flags, "{}: the flag reaches the crawl", s.name);
        assert_eq!(by_flag, from_file(&lines), "{}: the flag and the key resolve alike", s.name);
    }
}

#[test]
fn every_other_crawl_option_says_why_a_spider_file_has_no_key() {
    let cli = Cli::command();
    let crawl = cli.find_subcommand("crawl").expect("kumo crawl");
    for arg in crawl.get_arguments().filter(|a| !a.is_positional()) {
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "verbose" | "quiet" | "log-format" | "threads") {
            continue;
        }
        let setting = kumo_settings::by_flag(long).is_some();
        let reason = COMMAND_ONLY.iter().find(|(flag, _)| *flag == long);
        assert!(
            setting || reason.is_some(),
            "--{long} is neither a setting nor a command option with a reason"
        );
        assert!(!(setting && reason.is_some()), "--{long} is both a setting and a command option");
    }
    for (flag, _) in COMMAND_ONLY {
        assert!(
            crawl.get_arguments().any(|a| a.get_long() == Some(flag)),
            "--{flag} is not a kumo crawl option"
        );
    }
}
