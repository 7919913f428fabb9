//! The settings as command-line flags: one clap `Arg` per entry of the table (and a hidden
//! one per old flag), read back into a [`Layer`] of what the command line gave. clap keeps no
//! defaults of its own here: they are the table's, so a flag left out leaves a spider file's
//! value in place.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::layer::{self, Layer, Source};
use crate::table::{OldUnit, Setting};
use crate::{Kind, SETTINGS};

/// The crawl settings given on the command line (flatten it into a clap `Args` struct).
#[derive(Debug, Clone)]
pub struct SettingArgs {
    /// What the command line gave, as a [`Source::Flag`] layer: a flag left out is absent.
    pub layer: Layer,
}

impl clap::FromArgMatches for SettingArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut layer = Layer::new(Source::Flag);
        for s in SETTINGS {
            read(&mut layer, m, s.kind, s.name).map_err(invalid)?;
            for old in s.old.iter().filter_map(|o| o.flag) {
                read(&mut layer, m, s.kind, old).map_err(invalid)?;
            }
        }
        Ok(SettingArgs { layer })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for SettingArgs {
    fn augment_args(mut cmd: Command) -> Command {
        for s in SETTINGS {
            cmd = cmd.arg(arg(s));
            for old in s.old.iter().filter(|o| o.flag.is_some()) {
                let flag = old.flag.expect("filtered");
                let parse = move |text: &str| match old.unit {
                    OldUnit::Millis => layer::millis(s, text.trim().parse().ok(), text)
                        .map(|_| text.to_string())
                        .map_err(|e| e.to_string()),
                    _ => s.read(text).map(|_| text.to_string()),
                };
                cmd =
                    cmd.arg(Arg::new(flag).long(flag).hide(true).value_parser(parse).action(ArgAction::Set));
            }
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

/// The flag of one setting.
fn arg(s: &'static Setting) -> Arg {
    let mut help = s.doc.to_string();
    if !s.default.is_empty() && s.kind != Kind::Switch {
        help.push_str(&format!(" [default: {}]", s.default));
    }
    let mut arg = Arg::new(s.name).long(s.flag()).help(help).help_heading(s.group.title());
    if let Some(c) = s.short {
        arg = arg.short(c);
    }
    for &other in s.conflicts {
        arg = arg.conflicts_with(other);
    }
    let parse = move |text: &str| s.read(text).map(|_| text.to_string()).map_err(|m| named(s, m));
    match s.kind {
        Kind::Switch => arg.action(ArgAction::SetTrue),
        Kind::List => arg.action(ArgAction::Append).value_name(s.value_name).value_parser(parse),
        _ => arg.action(ArgAction::Set).value_name(s.value_name).value_parser(parse),
    }
}

/// A bound's message with the setting's name (`concurrency must be at least 1`).
fn named(s: &Setting, message: String) -> String {
    if message.starts_with("must ") { format!("{} {message}", s.name) } else { message }
}

/// Puts what the command line gave for `id` (the setting's name, or an old flag's, of a
/// setting of `kind`) in the layer.
fn read(layer: &mut Layer, m: &ArgMatches, kind: Kind, id: &str) -> Result<(), crate::SettingError> {
    if m.value_source(id) != Some(ValueSource::CommandLine) {
        return Ok(());
    }
    if let Ok(Some(on)) = m.try_get_one::<bool>(id) {
        return layer.set(id, if *on { "true" } else { "false" });
    }
    let values: Vec<&String> = m.get_many::<String>(id).into_iter().flatten().collect();
    match (kind, values.as_slice()) {
        (Kind::List, items) => layer.set_list(id, items.iter().map(|s| s.as_str())),
        (_, [.., last]) => layer.set(id, last),
        (_, []) => Ok(()),
    }
}

fn invalid(e: crate::SettingError) -> clap::Error {
    clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{e}\n"))
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};

    use super::*;
    use crate::Value;

    fn layer(args: &[&str]) -> Result<Layer, clap::Error> {
        let cmd = SettingArgs::augment_args(Command::new("kumo"));
        let m = cmd.try_get_matches_from(std::iter::once("kumo").chain(args.iter().copied()))?;
        Ok(SettingArgs::from_arg_matches(&m)?.layer)
    }

    #[test]
    fn flags_fill_only_what_was_given() {
        let l =
            layer(&["--delay", "250ms", "--user-agent", "a", "--user-agent", "b", "--sort-query"]).unwrap();
        assert_eq!(l.get("delay"), Some(&Value::Duration(std::time::Duration::from_millis(250))));
        assert_eq!(l.get("user_agent"), Some(&Value::List(vec!["a".into(), "b".into()])));
        assert_eq!(l.get("sort_query"), Some(&Value::Switch(true)));
        assert_eq!(l.get("timeout"), None, "a default is the table's, not the command line's");
    }

    #[test]
    fn old_flags_still_work_with_a_warning() {
        let l = layer(&["--delay-ms", "20"]).unwrap();
        assert_eq!(l.get("delay"), Some(&Value::Duration(std::time::Duration::from_millis(20))));
        assert_eq!(l.warnings().len(), 1);
        let e = layer(&["--delay-ms", &u64::MAX.to_string()]).unwrap_err().to_string();
        assert!(e.contains("at most 3600000 ms"), "{e}");
    }

    #[test]
    fn bounds_name_the_setting() {
        let e = layer(&["-c", "0"]).unwrap_err().to_string();
        assert!(e.contains("concurrency must be at least 1"), "{e}");
        let e = layer(&["--proxy", "gopher://127.0.0.1:1"]).unwrap_err().to_string();
        assert!(e.contains("gopher"), "{e}");
    }
}
