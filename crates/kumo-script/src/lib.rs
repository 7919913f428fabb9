//! kumo's sandboxed rules: the JavaScript hooks a spider file may carry (`allow`, `priority`,
//! `rewrite`, `item`, `extract`), run in QuickJS-NG (through rquickjs) under a time budget
//! per call, a heap cap and a stack cap, with nothing of the machine in reach: no files, no
//! network, no processes, no clock, no modules, and no code compiled from a string (`eval`
//! and the function constructors throw). Values cross as JSON data (built and read directly,
//! not as text), never as handles on kumo's objects; a page's `css`, `xpath`, `regex` and
//! `json` queries run kumo's own extraction on it. A call that fails is an error for its
//! page, never a crash; [`interrupt_all`] cuts every call short when kumo stops now.
//!
//! Isolation: no call sees anything an earlier call made, on the same page or another, nor
//! anything of another site's script. Each call runs the script's top level afresh (its
//! bindings, closures, maps and objects are the call's own); the built-in objects and the
//! global object that calls share are frozen, deep, before the script first runs; and each
//! [`Script::load`] gets sandboxes of its own (one per thread), even for the same source.
//! What a script can still tell apart between calls is only how long they take and the state
//! of `Math.random`.

#![warn(missing_docs)]

mod convert;
mod error;
mod limits;
mod lockdown;
mod page;
mod sandbox;
mod script;
mod stop;

pub use error::ScriptError;
pub use limits::{Ceiling, Limits};
pub use page::{Page, PageView};
pub use script::{FAILURES_TO_DISABLE, HOOKS, ItemAnswer, MAX_BODY, Rewrite, Script};
pub use stop::interrupt_all;
pub(crate) use stop::stopping;
