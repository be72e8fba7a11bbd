//! Fuzz target `embedding_text`: arbitrary text to pgvector's embedding
//! parser (`mempursuit::parse_embedding`, the document layer). Contract: no
//! panic; a parsed vector is non-empty and finite; an error names the
//! document (index 7, id "f") and the argument `embedding`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    match mempursuit::parse_embedding(text, 7, Some("f")) {
        Ok(v) => assert!(!v.is_empty() && v.iter().all(|x| x.is_finite()), "{v:?}"),
        Err(e) => {
            assert_eq!((e.index, e.id.as_deref()), (Some(7), Some("f")));
            assert_eq!(e.argument, "embedding");
            assert!(
                e.message.starts_with("document 7 (id \"f\")"),
                "{}",
                e.message
            );
        }
    }
});
