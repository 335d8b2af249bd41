//! The fault harness's fortnight (`openloop_tests::faults`) on DynamoDB: the store's every
//! request through a proxy that throttles, fails, slows and loses answers at 8%
//! (`openloop_tests::fault_proxy`), functions killed between two calls, the queue and the
//! mail provider failing as in memory — and nothing lost, doubled or stuck.

use std::sync::Arc;

use openloop_tests::Scratch;
use openloop_tests::fault_proxy::faulty_dynamodb;
use openloop_tests::faults::{self, Dice, Fortnight};

#[tokio::test]
async fn a_fortnight_on_dynamodb_at_an_8_percent_fault_rate_loses_and_doubles_nothing() {
    let scratch = Scratch::new("faults");
    let (config, clients) = scratch.provision().await;
    let dice = Dice::new(11, 0.08);
    let store = faulty_dynamodb(&clients, &config.table, &dice).await;
    let mut fortnight = Fortnight::new(faults::ports(Arc::new(store), &dice), dice.clone()).await;
    fortnight.play(&[9, 13, 17]).await;
    let (wrong, figures) = fortnight.violations().await;
    println!("{figures}");
    assert!(wrong.is_empty(), "{}\n{figures}", wrong.join("\n"));
    let lost = figures
        .faults
        .get("dynamodb writes and reads applied, answer lost")
        .copied()
        .unwrap_or(0);
    assert!(lost > 10, "answers were lost: {figures}");
    for slow in [
        "dynamodb requests slower than the attempt timeout, applied late",
        "dynamodb requests applied, answered after the attempt timeout",
    ] {
        assert!(figures.faults.get(slow).copied().unwrap_or(0) > 2, "{slow}: {figures}");
    }
    assert!(figures.mails > 20, "the gyms were worked: {figures}");
}
