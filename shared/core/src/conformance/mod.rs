//! The store conformance suite: one set of scenarios every [`TaskStore`] must pass — the
//! in-memory store in unit tests, the DynamoDB store against the emulator — so the two can
//! never drift. Each scenario makes its own account and ids, so they can share a table.
//! Each backend runs every scenario as a test of its own through
//! [`store_conformance_tests!`](crate::store_conformance_tests).
//!
//! The scenarios are split as the store is: one file per capability of [`crate::ports::store`]
//! (`accounts` checks `AccountStore`, `tasks` checks the task's writes and reads, `TaskWrites`
//! and `TaskReads`, and so on), the same names as the backends' files. A scenario belongs to
//! the capability whose promise it checks, even when it reads through another to see it kept
//! (a reservation is a promise of `TaskWrites::commit`, read back through the member's ledger).

use jiff::Timestamp;

use crate::kernel::error::{Conflict, StoreError};
use crate::kernel::ids::{AccountId, Email, MemberId};
use crate::ports::TaskStore;
use crate::task::reason::Reason;
use crate::task::transition::{Why, created};
use crate::task::{OutboundMessage, OutboundStatus, Task, TaskStatus};
use crate::testing::{at, sample_task_for};

mod accounts;
mod annotations;
mod connections;
mod connectors;
mod counters;
mod deliverability;
mod erasure;
mod idempotency;
mod learning;
mod loops;
mod member_open_tasks;
mod members;
mod memories;
mod message_templates;
mod metrics;
mod notices;
mod numbers;
mod sealing;
mod sign_in_links;
mod suggestions;
mod task_index;
mod tasks;
mod templates;
mod todos;
mod webhooks;

/// What a backend's tests make for each scenario: its store, and with it whatever must live as
/// long as the store does (the DynamoDB tests' hold on their scratch table, say).
pub trait Backend {
    fn store(&self) -> &dyn TaskStore;
}

impl<S: TaskStore> Backend for S {
    fn store(&self) -> &dyn TaskStore {
        self
    }
}

/// One `#[tokio::test]` per scenario, named after it in a module named after its capability
/// (`tasks::a_stale_write_changes_nothing`), each on a [`Backend`] of its own made by the given
/// expression (it may `.await`): `openloop_core::store_conformance_tests!(MemoryStore::new());`
/// Failures are independent, and cargo runs the scenarios in parallel. The expression is
/// evaluated where the macro is invoked (in a function it defines there,
/// `conformance_backend`), so it may name what is in scope there.
///
/// The list of scenarios is written here, once, by capability. It also makes [`scenario`], the
/// only way to reach a scenario from outside this module, so a scenario left out of the list
/// is dead code, which `clippy -D warnings` refuses.
///
/// [`Backend`]: crate::conformance::Backend
/// [`scenario`]: crate::conformance::scenario
#[macro_export]
macro_rules! store_conformance_tests {
    ($backend:expr) => {
        /// The backend of one scenario's test.
        async fn conformance_backend() -> impl $crate::conformance::Backend {
            $backend
        }
        $crate::store_conformance_tests!(@listed tests);
    };
    // The list, handed to the rule named `$then`.
    (@listed $then:ident) => {
        $crate::store_conformance_tests!(@$then {
            accounts: [
                accounts_are_created_once_and_saved_under_their_version,
                accounts_are_found_by_their_owners_address_as_it_changes,
            ],
            templates: [
                recurring_templates_are_versioned_and_due_when_enabled,
            ],
            tasks: [
                one_active_task_per_member_and_type,
                a_members_active_tasks_are_read_through_their_guards,
                a_stale_write_changes_nothing,
                history_is_complete_and_in_order,
                reservations_enforce_every_guarantee_atomically,
                a_reopened_task_holds_its_guard_again_unless_a_newer_task_does,
                a_commit_counts_an_ai_call_and_claims_actions_in_its_transaction,
            ],
            task_index: [
                the_due_index_holds_what_is_scheduled_and_pages,
                task_lists_are_scoped_filtered_and_paged,
                a_status_list_follows_the_task_through_its_writes,
                the_attribution_index_holds_watched_closed_tasks_and_revisions_keep_the_guard,
                the_activity_feed_lists_an_accounts_decisions_newest_first,
                the_owners_tallies_follow_every_write_of_the_task,
            ],
            members: [
                member_facts_are_versioned,
                member_facts_keep_the_order_their_events_were_accepted_in,
                suppressions_are_per_account,
                snapshots_hold_everything_the_gates_read,
                member_facts_are_listed_per_account_in_pages,
                a_drafts_snapshot_holds_its_template_connection_and_ai_calls,
            ],
            counters: [
                ai_calls_are_counted_per_account_and_day_up_to_the_limit,
                creation_counters_limit_and_count_in_the_same_write,
                an_episode_is_claimed_with_its_task_or_not_at_all,
                texts_and_segments_are_counted_per_account_and_day_up_to_the_limit,
                sends_are_summed_over_a_range_of_days_in_one_read,
            ],
            metrics: [
                daily_metrics_are_added_with_their_watermark_once,
                daily_metrics_are_read_by_range_without_the_watermark,
            ],
            notices: [
                owner_notices_are_listed_newest_first_and_each_digest_entry_is_taken_once,
            ],
            idempotency: [
                webhook_ids_are_claimed_once,
                an_action_is_claimed_once_and_a_failed_one_again,
            ],
            learning: [
                closing_a_task_writes_its_learning_record_in_the_same_commit,
                an_account_that_does_not_share_keeps_its_record_out_of_the_cross_tenant_set,
            ],
            connectors: [
                connector_health_counts_failures_degrades_once_and_recovers,
            ],
            connections: [
                a_connection_is_versioned_per_account_and_deleted_once,
            ],
            annotations: [
                annotations_keep_tags_as_a_set_and_notes_in_order,
            ],
            deliverability: [
                sends_are_counted_by_reservations_and_bounces_once_per_mail,
                a_sending_domain_is_claimed_by_one_account,
                an_sms_number_is_claimed_by_one_account,
            ],
            memories: [
                a_memory_book_is_versioned_per_account_and_in_the_send_snapshot,
            ],
            suggestions: [
                a_finding_is_suggested_once_and_listed_by_status_per_account,
            ],
            sign_in_links: [
                a_sign_in_link_is_redeemed_once_before_it_expires,
            ],
            numbers: [
                both_stores_keep_the_edges_of_a_number_and_refuse_beyond_them,
            ],
            message_templates: [
                an_owners_message_templates_are_kept_per_account_type_and_touch,
            ],
            loops: [
                a_loop_is_registered_with_its_task_found_while_open_and_resolved_once,
                a_trigger_book_is_versioned_per_account_and_keeps_its_filters,
                a_todo_is_made_with_its_loop_in_one_write_once_per_source,
                a_task_commit_resolves_its_loop_only_while_the_loop_is_open,
            ],
            todos: [
                a_todo_is_made_once_per_source_and_listed_by_status_as_it_changes,
            ],
            webhooks: [
                webhook_events_are_kept_from_the_write_that_caused_them_until_taken,
            ],
            member_open_tasks: [
                a_members_open_tasks_follow_their_guards_on_the_member_item,
            ],
            sealing: [
                a_gyms_secrets_are_kept_sealed_and_open_where_used,
            ],
            erasure: [
                erased_identities_are_kept_per_account,
                a_closed_task_is_erased_with_its_history_but_its_tally_stays,
                a_members_records_are_erased_and_no_one_elses,
                an_account_is_removed_page_by_page_with_its_routes_and_no_one_elses,
            ],
        });
    };
    (@tests { $($part:ident: [$($scenario:ident,)*],)* }) => {
        $(
            mod $part {
                $(
                    #[tokio::test]
                    async fn $scenario() {
                        let backend = super::conformance_backend().await;
                        $crate::conformance::scenario::$part::$scenario($crate::conformance::Backend::store(&backend)).await;
                    }
                )*
            }
        )*
    };
    (@scenarios { $($part:ident: [$($scenario:ident,)*],)* }) => {
        /// Every scenario of the suite, by capability and name; `store_conformance_tests!` runs
        /// each as a test.
        pub mod scenario {
            $(
                pub mod $part {
                    $(
                        pub async fn $scenario(store: &dyn $crate::ports::TaskStore) {
                            super::super::$part::$scenario(store).await;
                        }
                    )*
                }
            )*
        }
    };
}

store_conformance_tests!(@listed scenarios);

fn base() -> Timestamp {
    at("2026-11-02T14:00:00Z")
}

fn member(name: &str) -> MemberId {
    MemberId::parse(name).unwrap_or_else(|e| panic!("{e}"))
}

async fn new_task(store: &dyn TaskStore, account: AccountId, member_name: &str, status: TaskStatus) -> Task {
    let task = sample_task_for(account, member(member_name), status, base());
    store
        .create_task(&task, &created(&task, Why::new(Reason::ManualModeRequiresReview)), &[])
        .await
        .unwrap_or_else(|e| panic!("create_task: {e:?}"));
    task
}

fn is_conflict(r: Result<(), StoreError>, kind: Conflict) -> bool {
    matches!(r, Err(StoreError::Conflict(c)) if c == kind)
}

fn outbound(task: &Task, touch: u32, status: OutboundStatus) -> OutboundMessage {
    OutboundMessage {
        task_id: task.id,
        touch,
        status,
        to: task
            .member
            .email
            .clone()
            .unwrap_or_else(|| Email::parse("x@example.com").unwrap_or_else(|e| panic!("{e}"))),
        subject: "Hello".into(),
        message_id: format!("{}-{touch}@example.com", task.id),
        provider_id: None,
        provider_message_id: None,
        reserved_at: base(),
        sent_at: None,
    }
}

/// `task`'s touch reserved, as a worker reserves it before it sends: the member's ledger at
/// `ledger_version`, the day's sends under `daily_limit`.
fn reserve_touch(task: &Task, touch: u32, ledger_version: u64, daily_limit: u32) -> (Task, crate::task::commit::TaskCommit) {
    let (next, log) = crate::task::transition::record(task, base(), Why::new(Reason::SendReserved));
    let mut ledger = crate::members::member::SendLedger::default();
    ledger.sends.insert(format!("{}#{touch}", task.id), base());
    ledger.version = ledger_version;
    let mut commit = crate::task::commit::TaskCommit::new(next.clone(), log);
    commit.send = Some(crate::task::commit::SendEffect::Reserve {
        outbound: outbound(task, touch, OutboundStatus::Reserved),
        member_id: task.member.id.clone(),
        ledger,
        daily_date: base().to_zoned(jiff::tz::TimeZone::UTC).date(),
        daily_limit,
    });
    (next, commit)
}
