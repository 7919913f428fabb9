//! The little the tokenizer needs from tree construction, without a tree: which namespace the
//! next tag is in (SVG and MathML content allows CDATA and has no raw-text elements) and which
//! text mode a start tag switches to.
//!
//! Only namespace changes are kept, one entry per `<svg>`, `<math>` or integration point, so
//! the cost is nothing on pages without inline SVG or MathML.

/// The namespace content is parsed in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ns {
    Html,
    Svg,
    MathMl,
}

/// What the tokenizer does after a start tag.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Text {
    /// Tags as usual.
    Data,
    /// No tags up to the element's own end tag (`<style>`, `<textarea>`, `<title>`…).
    RawUntilEndTag,
    /// Script data, with its escapes.
    Script,
    /// No tags ever again (`<plaintext>`).
    Plain,
}

/// The stack of namespace changes; empty means HTML.
#[derive(Default)]
pub(crate) struct Tree {
    changes: Vec<Ns>,
}

/// The attribute facts a start tag in SVG or MathML needs.
#[derive(Default)]
pub(crate) struct ForeignAttrs {
    /// `<font>` with `color`, `face` or `size`, which leaves foreign content.
    pub(crate) font_leaves: bool,
    /// `<annotation-xml encoding>` naming an HTML type, an integration point.
    pub(crate) html_annotation: bool,
}

impl Tree {
    fn current(&self) -> Ns {
        self.changes.last().copied().unwrap_or(Ns::Html)
    }

    /// Whether the next tag is in SVG or MathML, where `<![CDATA[` starts a CDATA section and
    /// start tags need [`ForeignAttrs`].
    pub(crate) fn in_foreign(&self) -> bool {
        self.current() != Ns::Html
    }

    /// Updates the namespace for a start tag named `name` (lower case) and says how the
    /// content after it is read.
    pub(crate) fn start_tag(&mut self, name: &[u8], self_closing: bool, attrs: &ForeignAttrs) -> Text {
        let ns = self.current();
        match name {
            // A self-closed `<svg/>` is popped at once: nothing is inside it.
            b"svg" | b"math" if self_closing => Text::Data,
            b"svg" => self.enter(Ns::Svg),
            b"math" => self.enter(Ns::MathMl),
            _ if ns == Ns::Html => text_after(name),
            _ if leaves_foreign(name) || name == b"font" && attrs.font_leaves => {
                self.leave_foreign();
                Text::Data
            }
            _ if self_closing => Text::Data,
            b"foreignobject" | b"desc" | b"title" if ns == Ns::Svg => self.enter(Ns::Html),
            b"mi" | b"mo" | b"mn" | b"ms" | b"mtext" if ns == Ns::MathMl => self.enter(Ns::Html),
            b"annotation-xml" if ns == Ns::MathMl && attrs.html_annotation => self.enter(Ns::Html),
            _ => Text::Data,
        }
    }

    /// Updates the namespace for an end tag named `name` (lower case).
    pub(crate) fn end_tag(&mut self, name: &[u8]) {
        let ns = self.current();
        let outer = self.changes.len().checked_sub(2).and_then(|i| self.changes.get(i)).copied();
        let leaves = match (ns, name) {
            (Ns::Svg, b"svg") | (Ns::MathMl, b"math") => true,
            (Ns::Svg | Ns::MathMl, b"p" | b"br") => {
                self.leave_foreign();
                return;
            }
            (Ns::Html, b"foreignobject" | b"desc" | b"title") => outer == Some(Ns::Svg),
            (Ns::Html, b"mi" | b"mo" | b"mn" | b"ms" | b"mtext" | b"annotation-xml") => {
                outer == Some(Ns::MathMl)
            }
            _ => false,
        };
        if leaves {
            self.changes.pop();
        }
    }

    fn enter(&mut self, ns: Ns) -> Text {
        self.changes.push(ns);
        Text::Data
    }

    /// Back out of SVG and MathML to the nearest HTML content (the document or an integration
    /// point), as a stray HTML element in foreign content does.
    fn leave_foreign(&mut self) {
        while self.in_foreign() {
            self.changes.pop();
        }
    }
}

/// How an HTML start tag switches the tokenizer. Scripting is off, as for any client that runs
/// no scripts: `<noscript>` content is markup, so the links a site keeps there for such
/// clients (often its pagination) are found. A browser with scripting on reads it as raw text.
fn text_after(name: &[u8]) -> Text {
    match name {
        b"title" | b"textarea" | b"style" | b"iframe" | b"xmp" | b"noembed" | b"noframes" => {
            Text::RawUntilEndTag
        }
        b"script" => Text::Script,
        b"plaintext" => Text::Plain,
        _ => Text::Data,
    }
}

/// HTML elements whose start tag ends SVG or MathML content (the tree builder's "breakout"
/// list; `<font>` only with certain attributes).
fn leaves_foreign(name: &[u8]) -> bool {
    matches!(
        name,
        b"b" | b"big"
            | b"blockquote"
            | b"body"
            | b"br"
            | b"center"
            | b"code"
            | b"dd"
            | b"div"
            | b"dl"
            | b"dt"
            | b"em"
            | b"embed"
            | b"h1"
            | b"h2"
            | b"h3"
            | b"h4"
            | b"h5"
            | b"h6"
            | b"head"
            | b"hr"
            | b"i"
            | b"img"
            | b"li"
            | b"listing"
            | b"menu"
            | b"meta"
            | b"nobr"
            | b"ol"
            | b"p"
            | b"pre"
            | b"ruby"
            | b"s"
            | b"small"
            | b"span"
            | b"strong"
            | b"strike"
            | b"sub"
            | b"sup"
            | b"table"
            | b"tt"
            | b"u"
            | b"ul"
            | b"var"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(tree: &mut Tree, name: &str) -> Text {
        tree.start_tag(name.as_bytes(), false, &ForeignAttrs::default())
    }

    #[test]
    fn raw_text_only_in_html() {
        let mut t = Tree::default();
        assert_eq!(start(&mut t, "style"), Text::RawUntilEndTag);
        assert_eq!(start(&mut t, "svg"), Text::Data);
        assert!(t.in_foreign());
        assert_eq!(start(&mut t, "style"), Text::Data);
        assert_eq!(start(&mut t, "script"), Text::Data);
        t.end_tag(b"svg");
        assert!(!t.in_foreign());
        assert_eq!(start(&mut t, "script"), Text::Script);
        assert_eq!(start(&mut t, "plaintext"), Text::Plain);
        assert_eq!(start(&mut t, "noscript"), Text::Data, "scripting is off");
    }

    #[test]
    fn integration_points_return_to_html() {
        let mut t = Tree::default();
        start(&mut t, "svg");
        start(&mut t, "foreignObject".to_ascii_lowercase().as_str());
        assert!(!t.in_foreign());
        assert_eq!(start(&mut t, "textarea"), Text::RawUntilEndTag);
        t.end_tag(b"foreignobject");
        assert!(t.in_foreign());
        start(&mut t, "math");
        start(&mut t, "mi");
        assert!(!t.in_foreign());
        t.end_tag(b"mi");
        t.end_tag(b"math");
        assert!(t.in_foreign());
        let html = ForeignAttrs { html_annotation: true, ..ForeignAttrs::default() };
        t.end_tag(b"svg");
        start(&mut t, "math");
        assert_eq!(t.start_tag(b"annotation-xml", false, &html), Text::Data);
        assert!(!t.in_foreign());
    }

    #[test]
    fn breakouts_and_self_closing() {
        let mut t = Tree::default();
        assert_eq!(t.start_tag(b"svg", true, &ForeignAttrs::default()), Text::Data);
        assert!(!t.in_foreign());
        start(&mut t, "svg");
        start(&mut t, "svg");
        start(&mut t, "p");
        assert!(!t.in_foreign());
        start(&mut t, "math");
        start(&mut t, "font");
        assert!(t.in_foreign());
        let leaves = ForeignAttrs { font_leaves: true, ..ForeignAttrs::default() };
        t.start_tag(b"font", false, &leaves);
        assert!(!t.in_foreign());
        start(&mut t, "svg");
        t.end_tag(b"br");
        assert!(!t.in_foreign());
        start(&mut t, "svg");
        assert_eq!(t.start_tag(b"title", true, &ForeignAttrs::default()), Text::Data);
        assert!(t.in_foreign());
    }
}
