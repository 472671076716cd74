//! Prints the tree-sitter s-expression for a CUDA snippet read from a file.
fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut p = tree_sitter::Parser::new();
    let _ = p.set_language(&tree_sitter_cuda::LANGUAGE.into());
    if let Some(t) = p.parse(&text, None) {
        print_node(t.root_node(), &text, 0);
    }
}
fn print_node(n: tree_sitter::Node, text: &str, depth: usize) {
    let mut c = n.walk();
    let kids: Vec<_> = n.children(&mut c).collect();
    let field_of = |i: usize| n.field_name_for_child(i as u32).unwrap_or("");
    let snippet: String = text[n.byte_range()]
        .chars()
        .take(40)
        .collect::<String>()
        .replace('\n', "\\n");
    println!(
        "{}{} [{}..{}] {}",
        "  ".repeat(depth),
        n.kind(),
        n.start_byte(),
        n.end_byte(),
        if kids.is_empty() {
            snippet
        } else {
            String::new()
        }
    );
    for (i, k) in kids.iter().enumerate() {
        let f = field_of(i);
        if !f.is_empty() {
            println!("{}  .{}:", "  ".repeat(depth), f);
        }
        print_node(*k, text, depth + 1);
    }
}
