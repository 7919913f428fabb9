//! kumo's sandboxed rules: the JavaScript hooks a spider file may carry (`allow`, `priority`,
//! `rewrite`, `item`, `extract`), run in QuickJS-NG (through rquickjs) under a time budget
//! per call, a heap cap and a stack cap, with nothing of the machine in reach: no files, no
//! network, no processes, no clock, no `eval` once loaded. Values cross as JSON data (built
//! and read directly, not as text), never as handles on kumo's objects; a page's `css`, `xpath`, `regex` and `json`
//! queries run kumo's own extraction on it. A call that fails is an error for its page, never a crash.

mod convert;
mod error;
mod limits;
mod page;
mod sandbox;
mod script;

pub use error::ScriptError;
pub use limits::Limits;
pub use page::{Page, PageView};
pub use script::{FAILURES_TO_DISABLE, HOOKS, ItemAnswer, MAX_BODY, Rewrite, Script};
