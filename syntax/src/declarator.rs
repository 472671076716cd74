//! Names of declarations in the tree: a function definition's name and declarator, a
//! declarator's name, the declarators of a declaration, and the qualifiers a broken parse
//! eats into a name.

use tree_sitter::Node;

use crate::util::{named_children, node_text, NodeExt};

/// The name of a function definition's declarator.
pub(crate) fn function_name<'t>(def: Node<'t>) -> Option<Node<'t>> {
    function_declarator(def)?.field("declarator")
}

/// The `function_declarator` of a function definition: the parent of its name, which
/// holds the parameters.
pub(crate) fn function_declarator<'t>(def: Node<'t>) -> Option<Node<'t>> {
    let mut d = def.field("declarator")?;
    for _ in 0..16 {
        if d.kind_name() == "function_declarator" {
            return Some(d);
        }
        d = d.field("declarator")?;
    }
    None
}

/// The identifier a declarator declares (through pointers, arrays, references, inits).
pub(crate) fn declarator_name<'t>(d: Node<'t>) -> Option<Node<'t>> {
    let mut d = d;
    for _ in 0..32 {
        match d.kind_name() {
            "identifier" | "field_identifier" | "qualified_identifier" | "operator_name" => {
                return Some(d)
            }
            _ => {}
        }
        d = match d.field("declarator") {
            Some(n) => n,
            None => *named_children(d)
                .iter()
                .find(|c| c.kind_name().ends_with("declarator") || c.kind_name() == "identifier")?,
        };
    }
    None
}

/// The qualifier (`constexpr`, `const`) that ends the error node just before the
/// declaration `node`: a function-like macro call without a `;` before it takes the
/// declaration's first qualifier into the error.
pub(crate) fn eaten_qualifier<'t>(node: Node, text: &'t str) -> Option<&'t str> {
    let prev = node.prev_sibling()?;
    if !prev.is_error()
        || !text
            .get(prev.end_byte()..node.start_byte())?
            .trim()
            .is_empty()
    {
        return None;
    }
    let mut last = prev;
    while let Some(c) = last.child(last.child_count().checked_sub(1)?) {
        last = c;
        if last.kind() == "type_qualifier" {
            let q = node_text(last, text).trim();
            return matches!(q, "constexpr" | "const").then_some(q);
        }
    }
    None
}

/// The declarators of a declaration (skipping the type and qualifiers).
pub(crate) fn declarators(decl: Node) -> Vec<Node> {
    let mut cursor = decl.walk();
    decl.fields("declarator", &mut cursor).collect()
}
