//! HTML serialization of skyscraper nodes for `inner_html` / `outer_html` takes and for regex
//! selectors inside XPath matches. Written here rather than using skyscraper's `display`
//! because that recurses once per level (a page nested ten thousand deep overflowed the stack
//! in a test) and its escaping differs from html5ever's; this follows the HTML serialization
//! rules as html5ever does, attributes in name order like scraper's, so XPath and CSS takes of
//! the same element give the same string.

use skyscraper::xpath::XpathItemTree;
use skyscraper::xpath::grammar::XpathItemTreeNode;

/// Elements without an end tag or contents.
const VOID: [&str; 18] = [
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input", "keygen",
    "link", "meta", "param", "source", "track", "wbr",
];

/// Elements whose text is written as it is, unescaped.
const RAW_TEXT: [&str; 8] =
    ["style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext", "noscript"];

enum Step<'t> {
    /// Write this node; `raw` when its parent's text is not escaped.
    Node(&'t XpathItemTreeNode, bool),
    /// Write the end tag of this element.
    End(&'t str),
}

/// `node` itself as HTML (the whole document for the document node).
pub(super) fn outer(node: &XpathItemTreeNode, tree: &XpathItemTree) -> String {
    let mut out = String::new();
    write(vec![Step::Node(node, false)], tree, &mut out);
    out
}

/// The contents of `node` as HTML.
pub(super) fn inner(node: &XpathItemTreeNode, tree: &XpathItemTree) -> String {
    let mut out = String::new();
    let raw = matches!(node, XpathItemTreeNode::ElementNode(e) if RAW_TEXT.contains(&e.name.as_str()));
    write(children(node, tree, raw), tree, &mut out);
    out
}

/// Child steps of `node` in the order they pop off the stack (reversed), attributes left out.
fn children<'t>(node: &XpathItemTreeNode, tree: &'t XpathItemTree, raw: bool) -> Vec<Step<'t>> {
    let mut steps: Vec<Step<'t>> = node
        .children(tree)
        .into_iter()
        .filter(|child| !child.is_attribute_node())
        .map(|child| Step::Node(child, raw))
        .collect();
    steps.reverse();
    steps
}

/// Serializes with an explicit stack: depth costs heap, not call stack.
fn write<'t>(mut stack: Vec<Step<'t>>, tree: &'t XpathItemTree, out: &mut String) {
    while let Some(step) = stack.pop() {
        let (node, raw) = match step {
            Step::End(name) => {
                out.push_str("</");
                out.push_str(name);
                out.push('>');
                continue;
            }
            Step::Node(node, raw) => (node, raw),
        };
        match node {
            XpathItemTreeNode::ElementNode(element) => {
                out.push('<');
                out.push_str(&element.name);
                // In name order, as scraper keeps them (it sorts them for lookup), so that CSS
                // and XPath takes of one element agree.
                let mut attributes = element.attributes(tree);
                attributes.sort_by(|a, b| a.name.cmp(&b.name));
                for attribute in attributes {
                    out.push(' ');
                    out.push_str(attribute.original_name.as_deref().unwrap_or(&attribute.name));
                    out.push_str("=\"");
                    escape(&attribute.value, true, out);
                    out.push('"');
                }
                out.push('>');
                let name = element.name.as_str();
                if !VOID.contains(&name) {
                    stack.push(Step::End(name));
                    stack.extend(children(node, tree, RAW_TEXT.contains(&name)));
                }
            }
            XpathItemTreeNode::DocumentNode(_) => stack.extend(children(node, tree, false)),
            XpathItemTreeNode::TextNode(text) if raw => out.push_str(&text.content),
            XpathItemTreeNode::TextNode(text) => escape(&text.content, false, out),
            XpathItemTreeNode::CommentNode(comment) => {
                out.push_str("<!--");
                out.push_str(&comment.content);
                out.push_str("-->");
            }
            XpathItemTreeNode::PINode(pi) => {
                out.push_str("<?");
                out.push_str(&pi.target);
                out.push(' ');
                out.push_str(&pi.data);
                out.push('>');
            }
            XpathItemTreeNode::DoctypeNode(doctype) => {
                out.push_str("<!DOCTYPE ");
                out.push_str(&doctype.name);
                out.push('>');
            }
            XpathItemTreeNode::AttributeNode(attribute) => escape(&attribute.value, false, out),
        }
    }
}

/// The HTML serialization escapes: `&`, no-break space, `<` and `>`, and in attributes `"`.
fn escape(text: &str, attribute: bool, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}
