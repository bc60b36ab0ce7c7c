//! The ETag of a document and how it is sealed with its sequence.

use super::*;

#[test]
fn an_etag_is_the_quoted_hex_of_the_bodys_xxh3_128() {
    let body = br#"{"horse_no":"E271"}"#;
    let expected = format!("\"{:032x}\"", xxhash_rust::xxh3::xxh3_128(body));
    assert_eq!(etag(body).as_slice(), expected.as_bytes());
    assert_ne!(etag(b"{}"), etag(b"[]"));
}

#[test]
fn a_sealed_form_is_tagged_by_the_json_it_sends() {
    let record = FormDoc::render("E271", "NAME", [&b"{}"[..], b"{}"].into_iter());
    let stored = seal(true, &record, 7);
    let json = FormDoc::body(&record, None).expect("framed");
    assert_eq!(&stored[..ETAG_LEN], etag(&json).as_slice());
    assert_eq!(unseal(&stored), record.as_slice());
    let doc = Doc::new(stored.into()).expect("tagged");
    assert_eq!(&*doc, record.as_slice());
    assert_eq!(doc.etag(), etag(&json).as_slice());
    assert_eq!(doc.seq(), 7);
}
