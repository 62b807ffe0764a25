//! The digest a `--json` result of `weft explore` carries: a hash of every
//! other field, so that `weft merge` tells a result weft wrote from one
//! edited by hand (a changed status or execution count). It proves nothing
//! against someone who recomputes it; it catches edits and truncations.

use serde_json::Value;

/// The field that holds the digest.
pub const FIELD: &str = "digest";

/// The digest of `value`'s fields but [`FIELD`] (an object's keys in
/// order, compact).
pub fn of(value: &Value) -> String {
    let mut without = value.clone();
    if let Value::Object(fields) = &mut without {
        fields.remove(FIELD);
    }
    let text = serde_json::to_string(&without).expect("a JSON value serialises");
    blake3::hash(text.as_bytes()).to_hex()[..32].to_string()
}

/// Sets `value`'s digest (see [`of`]).
pub fn seal(value: &mut Value) {
    let digest = of(value);
    if let Value::Object(fields) = value {
        fields.insert(FIELD.into(), Value::String(digest));
    }
}

/// Whether `value` carries the digest of its other fields.
pub fn intact(value: &Value) -> bool {
    value.get(FIELD).and_then(Value::as_str) == Some(of(value).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edited_result_is_told_from_a_sealed_one() {
        let mut value = json!({"status": "pass", "executions": 10, "elapsed_ms": 1.25});
        assert!(!intact(&value));
        seal(&mut value);
        assert!(intact(&value));
        let text = serde_json::to_string_pretty(&value).unwrap();
        let read: Value = serde_json::from_str(&text).unwrap();
        assert!(intact(&read), "the digest survives printing and reading");
        let mut edited = read.clone();
        edited["executions"] = json!(1_000_000_000_000u64);
        assert!(!intact(&edited));
    }
}
