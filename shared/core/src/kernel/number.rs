//! One rule for numbers: a number that comes from outside —
//! an owner's setting, a member event, a price, PushPress's data — is read by [`check`] (or
//! [`money`]) before anything keeps it: a number DynamoDB cannot hold (beyond ±9.99e125, or
//! nearer zero than 1e-130 but not zero) or one out of the field's bounds is refused with the
//! field's code and a message naming the field (`422`). Both stores refuse to be handed an
//! unstorable number at all ([`storable_value`]; the DynamoDB adapter reads its items with
//! [`storable`] too), so a value that slipped past an entry point is a `422`, never a `503`.

use serde::Serialize;

use crate::kernel::error::InvalidInput;

/// The largest magnitude a stored number may have (DynamoDB holds up to 9.99…e125).
pub const MAX_STORABLE: f64 = 9.99e125;
/// The smallest magnitude a stored number other than zero may have (DynamoDB: 1e-130).
pub const MIN_STORABLE: f64 = 1e-130;

/// The largest amount of money one value may name (a month's membership, a payment, a plan
/// price): far above any gym's, far below what DynamoDB's numbers can hold.
pub const MAX_MONEY: f64 = 100_000.0;

/// Whether the store can hold `value`: finite, and zero or between 1e-130 and 9.99e125 in
/// magnitude.
pub fn storable(value: f64) -> bool {
    value.is_finite() && (value == 0.0 || (MIN_STORABLE..=MAX_STORABLE).contains(&value.abs()))
}

/// `value` read for `field`: storable and within `min..=max`, else refused with `code` and a
/// message naming the field.
pub fn check(code: &'static str, field: &str, value: f64, min: f64, max: f64) -> Result<f64, InvalidInput> {
    if !storable(value) {
        return Err(InvalidInput::new(
            code,
            format!(
                "{field} is not a number Openloop can keep (it must be 0, or between {MIN_STORABLE:e} and {MAX_STORABLE:e} in size); give a number from {min} to {max}"
            ),
        ));
    }
    if !(min..=max).contains(&value) {
        return Err(InvalidInput::new(code, format!("{field} must be a number from {min} to {max}")));
    }
    Ok(value)
}

/// `value` is an amount of money in 0..=[`MAX_MONEY`] that the store can hold.
pub fn money(code: &'static str, field: &str, value: f64) -> Result<f64, InvalidInput> {
    check(code, field, value, 0.0, MAX_MONEY)
}

/// A whole number from outside (JSON's numbers are all one type) read for `field`: storable,
/// whole and within `min..=max`.
pub fn whole(code: &'static str, field: &str, value: f64, min: u64, max: u64) -> Result<u64, InvalidInput> {
    // Bounds of a u64 are exact in f64 only up to 2^53; every bound used here is far below.
    let checked = check(code, field, value, min as f64, max as f64)?;
    if checked.fract() != 0.0 {
        return Err(InvalidInput::new(
            code,
            format!("{field} must be a whole number from {min} to {max}"),
        ));
    }
    Ok(checked as u64)
}

/// The code of a number a store was handed but cannot hold.
pub const UNSTORABLE: &str = "unstorable_number";

/// Every number in `value`'s serde form is storable; else the first that is not, named by its
/// path (`settings.plan_prices.p1`). What both stores check before they write.
pub fn storable_value<T: Serialize + ?Sized>(value: &T) -> Result<(), InvalidInput> {
    // NaN and the infinities become `null` in JSON: no entry point can take them (JSON has
    // no such numbers), and the DynamoDB adapter's own walk of its items refuses them.
    let json = serde_json::to_value(value).map_err(|e| InvalidInput::new(UNSTORABLE, format!("the value cannot be stored: {e}")))?;
    match first_unstorable(&json, &mut Vec::new()) {
        Some((path, number)) => Err(unstorable(&path, &number)),
        None => Ok(()),
    }
}

/// The refusal of an unstorable number at `path`.
pub fn unstorable(path: &str, number: &str) -> InvalidInput {
    let field = if path.is_empty() { "a number" } else { path };
    InvalidInput::new(
        UNSTORABLE,
        format!(
            "{field} is {number}: not a number Openloop can keep (it must be 0, or between {MIN_STORABLE:e} and {MAX_STORABLE:e} in size)"
        ),
    )
}

fn first_unstorable(value: &serde_json::Value, path: &mut Vec<String>) -> Option<(String, String)> {
    match value {
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && !storable(f) => Some((path.join("."), n.to_string())),
            // Integers: DynamoDB holds 38 digits, more than any u64/i64 has.
            _ => None,
        },
        serde_json::Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            path.push(i.to_string());
            let found = first_unstorable(item, path);
            path.pop();
            found
        }),
        serde_json::Value::Object(map) => map.iter().find_map(|(key, item)| {
            path.push(key.clone());
            let found = first_unstorable(item, path);
            path.pop();
            found
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edges_of_what_dynamodb_holds_are_kept_and_beyond_them_refused() {
        for good in [0.0, -0.0, 1e-130, -1e-130, 9.99e125, -9.99e125, 1.0, 149.99] {
            assert!(storable(good), "{good}");
        }
        for bad in [
            1e-131,
            -1e-131,
            1e126,
            -1e126,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ] {
            assert!(!storable(bad), "{bad}");
        }
    }

    #[test]
    fn a_field_is_refused_by_name_for_each_bad_number() {
        for bad in [1e-131, 1e126, -5.0, f64::NAN, MAX_MONEY + 0.01] {
            let e = money("invalid_avg_membership_price", "avg_membership_price", bad).expect_err("refused");
            assert_eq!(e.code, "invalid_avg_membership_price");
            assert!(e.message.contains("avg_membership_price"), "{}", e.message);
        }
        for good in [0.0, 149.99, MAX_MONEY] {
            assert_eq!(money("c", "f", good), Ok(good));
        }
        assert_eq!(whole("c", "f", 3.0, 1, 14), Ok(3));
        for bad in [3.5, 0.0, 15.0, 1e-131, 1e126, -5.0] {
            assert!(whole("c", "f", bad, 1, 14).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_value_with_an_unstorable_number_names_its_path() {
        #[derive(Serialize)]
        struct Settings {
            plan_prices: std::collections::BTreeMap<String, f64>,
            limit: u64,
        }
        let mut prices = std::collections::BTreeMap::from([("p1".to_owned(), 1e-130)]);
        let ok = Settings {
            plan_prices: prices.clone(),
            limit: u64::MAX,
        };
        assert_eq!(storable_value(&ok), Ok(()));
        prices.insert("p2".into(), 1e-131);
        let e = storable_value(&Settings {
            plan_prices: prices,
            limit: 1,
        })
        .expect_err("refused");
        assert_eq!(e.code, UNSTORABLE);
        assert!(e.message.starts_with("plan_prices.p2 is 1e-131"), "{}", e.message);
    }
}
