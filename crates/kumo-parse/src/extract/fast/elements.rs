//! What html5ever's tree builder does with an element by its name alone, as far as the walk
//! needs it: which elements are void, which start tags first close an open `<p>`, which are
//! "special" (they stop the search for an open `<li>`).

/// `h1` to `h6`.
pub(crate) fn is_heading(name: &[u8]) -> bool {
    matches!(name, b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6")
}

/// Elements without content or end tag.
pub(crate) fn is_void(name: &[u8]) -> bool {
    matches!(
        name,
        b"area"
            | b"base"
            | b"basefont"
            | b"bgsound"
            | b"br"
            | b"embed"
            | b"hr"
            | b"img"
            | b"input"
            | b"keygen"
            | b"link"
            | b"meta"
            | b"param"
            | b"source"
            | b"track"
            | b"wbr"
    )
}

/// Start tags that first close an open `<p>` (in button scope).
pub(crate) fn closes_p(name: &[u8]) -> bool {
    is_heading(name)
        || matches!(
            name,
            b"address"
                | b"article"
                | b"aside"
                | b"blockquote"
                | b"center"
                | b"details"
                | b"dialog"
                | b"dir"
                | b"div"
                | b"dl"
                | b"fieldset"
                | b"figcaption"
                | b"figure"
                | b"footer"
                | b"header"
                | b"hgroup"
                | b"main"
                | b"menu"
                | b"nav"
                | b"ol"
                | b"p"
                | b"section"
                | b"summary"
                | b"table"
                | b"ul"
                | b"pre"
                | b"listing"
                | b"form"
                | b"li"
                | b"dd"
                | b"dt"
                | b"hr"
                | b"xmp"
        )
}

/// The tree builder's "special" elements (HTML namespace) that can be on the walk's stack.
pub(crate) fn is_special(name: &[u8]) -> bool {
    is_heading(name)
        || matches!(
            name,
            b"address"
                | b"applet"
                | b"article"
                | b"aside"
                | b"blockquote"
                | b"button"
                | b"center"
                | b"dd"
                | b"details"
                | b"dir"
                | b"div"
                | b"dl"
                | b"dt"
                | b"fieldset"
                | b"figcaption"
                | b"figure"
                | b"footer"
                | b"form"
                | b"header"
                | b"hgroup"
                | b"iframe"
                | b"li"
                | b"listing"
                | b"main"
                | b"marquee"
                | b"menu"
                | b"nav"
                | b"noembed"
                | b"noframes"
                | b"noscript"
                | b"object"
                | b"ol"
                | b"p"
                | b"pre"
                | b"script"
                | b"section"
                | b"style"
                | b"summary"
                | b"table"
                | b"tbody"
                | b"td"
                | b"textarea"
                | b"tfoot"
                | b"th"
                | b"thead"
                | b"title"
                | b"tr"
                | b"ul"
                | b"xmp"
                | b"caption"
                | b"colgroup"
        )
}
