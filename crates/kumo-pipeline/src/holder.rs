//! Who holds an output file's lock: the process, its command, and the kumo state directory it
//! holds, read from `/proc` (Linux). A file sink locks its file (`flock`) for as long as it
//! lives, so two crawls never write one file; the second is told which crawl has it.

use std::fs;
use std::path::{Path, PathBuf};

/// The file kumo's state directories are marked with (`kumo_store_embedded::dir::MARKER`).
const STATE_MARKER: &str = "KUMO_STATE";

/// A sentence naming the process that holds a `flock` on the file with this device and inode,
/// or `None` where `/proc` does not tell.
pub(crate) fn describe(dev: u64, ino: u64) -> Option<String> {
    let pid = holder_pid(dev, ino)?;
    let command = fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| {
            let args: Vec<String> = b
                .split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            args.join(" ")
        })
        .filter(|c| !c.is_empty());
    let mut text = format!("process {pid}");
    if let Some(c) = command {
        text += &format!(" ({c})");
    }
    match state_dirs(pid).as_slice() {
        [] => {}
        [one] => text += &format!(", crawl state {}", one.display()),
        many => {
            let names: Vec<String> = many.iter().map(|p| p.display().to_string()).collect();
            text += &format!(", crawl states {}", names.join(", "));
        }
    }
    Some(text)
}

/// The process holding a `flock` on the file `dev`/`ino`: `/proc/locks` lines read
/// `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`.
fn holder_pid(dev: u64, ino: u64) -> Option<u32> {
    let locks = fs::read_to_string("/proc/locks").ok()?;
    let (major, minor) = (dev_major(dev), dev_minor(dev));
    locks.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, id) = (*f.get(1)?, f.get(4)?.parse::<u32>().ok()?, *f.get(5)?);
        let mut parts = id.split(':');
        let ma = u64::from_str_radix(parts.next()?, 16).ok()?;
        let mi = u64::from_str_radix(parts.next()?, 16).ok()?;
        let i = parts.next()?.parse::<u64>().ok()?;
        (kind == "FLOCK" && ma == major && mi == minor && i == ino).then_some(pid)
    })
}

/// The kumo state directories process `pid` has open (a crawl keeps its state directory open
/// for its lock).
fn state_dirs(pid: u32) -> Vec<PathBuf> {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> =
        fds.filter_map(|e| fs::read_link(e.ok()?.path()).ok()).filter(|p| is_state_dir(p)).collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

fn is_state_dir(p: &Path) -> bool {
    p.is_dir() && p.join(STATE_MARKER).is_file()
}

// glibc's encoding of a dev_t (gnu_dev_major / gnu_dev_minor).
fn dev_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff)
}

fn dev_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn names_this_process_as_the_holder_of_its_own_lock() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("out.jsonl");
        let f = fs::File::create(&path).unwrap();
        f.try_lock().unwrap();
        let m = f.metadata().unwrap();
        let text = describe(m.dev(), m.ino()).expect("/proc tells");
        assert!(text.starts_with(&format!("process {}", std::process::id())), "{text}");
    }
}
