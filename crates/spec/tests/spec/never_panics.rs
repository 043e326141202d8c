//! Bad input never panics: any mutation of a valid spec builds or gives a `SpecError`.

use proptest::prelude::*;

const BASE: &str = aifabric_fixtures::specs::FUZZ_BASE;

/// Values a careless or hostile spec might hold where a number belongs.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u32..6).prop_map(|v| v.to_string()),
        1 => Just("-1".to_owned()),
        1 => Just("4294967295".to_owned()),
        1 => Just("99999999999".to_owned()),
        1 => Just("1e300".to_owned()),
        1 => Just(".nan".to_owned()),
        1 => Just("abc".to_owned()),
        1 => Just("0.5".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_numbers_never_panic(picks in proptest::collection::vec((0usize..200, number()), 1..4)) {
        // Replace some of the numbers in the base spec.
        let mut spans = Vec::new();
        let bytes = BASE.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                if i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                    continue; // part of a name like `d1`
                }
                spans.push((start, i));
            }
            i += 1;
        }
        let mut text = BASE.to_owned();
        let mut chosen: Vec<(usize, String)> = picks
            .into_iter()
            .map(|(k, v)| (k % spans.len(), v))
            .collect();
        chosen.sort_by_key(|c| std::cmp::Reverse(c.0));
        chosen.dedup_by_key(|c| c.0);
        for (k, v) in chosen {
            let (s, e) = spans[k];
            text.replace_range(s..e, &v);
        }
        let _ = aifabric_spec::build_str("fuzz.yaml", &text);
    }

    #[test]
    fn truncated_or_garbled_text_never_panics(cut in 0usize..2000, junk in "[ -~\n]{0,12}") {
        let cut = cut.min(BASE.len());
        let text = format!("{}{}", &BASE[..cut], junk);
        let _ = aifabric_spec::build_str("fuzz.yaml", &text);
    }
}

#[test]
fn the_fuzz_base_is_valid() {
    aifabric_spec::build_str("fuzz.yaml", BASE).unwrap();
}

#[test]
fn huge_counts_are_refused_before_building() {
    let text = BASE.replace("pods: 2", "pods: 4000000000");
    let e = aifabric_spec::build_str("fuzz.yaml", &text).unwrap_err();
    assert!(e.message.contains("would build"), "{e}");
    assert!(e.hint.unwrap().contains("at most"));
}
