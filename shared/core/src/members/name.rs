//! A member's name as a person writes it to them. PushPress and the gym's forms keep names as
//! they were typed — "BOB", "mary-jane", "o'neil" —, and a greeting that repeats the caps lock
//! reads like a machine's. A name typed all in capitals or all in lower case is written with a
//! capital at the start of each part (after a space, a hyphen or an apostrophe); a name typed
//! in mixed case ("McDonald", "DeShawn", "van der Berg") is the member's own spelling, kept.

/// `name` as a greeting writes it: "BOB" → "Bob", "mary-jane" → "Mary-Jane", "o'neil" →
/// "O'Neil"; "McDonald" as it is.
pub fn as_written(name: &str) -> String {
    let letters = || name.chars().filter(|c| c.is_alphabetic());
    let all_upper = letters().all(|c| !c.is_lowercase());
    let all_lower = letters().all(|c| !c.is_uppercase());
    let has_case = letters().any(|c| c.is_lowercase() || c.is_uppercase());
    if !has_case || !(all_upper || all_lower) {
        return name.to_owned();
    }
    let mut out = String::with_capacity(name.len());
    let mut start = true;
    for c in name.chars() {
        if start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
            start = false;
        } else if c.is_alphabetic() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
            start = matches!(c, ' ' | '-' | '\'' | '\u{2019}' | '.');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_written_as_a_person_writes_it() {
        for (typed, written) in [
            ("BOB", "Bob"),
            ("bob", "Bob"),
            ("mary-jane", "Mary-Jane"),
            ("MARY-JANE", "Mary-Jane"),
            ("o'neil", "O'Neil"),
            ("O'NEIL", "O'Neil"),
            ("mary ann", "Mary Ann"),
            ("josé", "José"),
            ("ÉLODIE", "Élodie"),
            ("McDonald", "McDonald"),
            ("DeShawn", "DeShawn"),
            ("Bob", "Bob"),
            ("van der Berg", "van der Berg"),
            ("李", "李"),
        ] {
            assert_eq!(as_written(typed), written, "{typed:?}");
        }
    }
}
