//! Operator commands against a deployed table (the function's environment: `OPENLOOP_TABLE`,
//! `AWS_REGION`, credentials; `AWS_ENDPOINT_URL` for the emulator).
//!
//! `openloop-admin backfill-tallies [ACCOUNT_ID…]`: writes the tally of every task of the
//! accounts named, or of every account — once, after upgrading a table written before the
//! tallies existed (the owner's numbers, the overview and the review queue read them); and
//! adds each open task to its member's item, then marks the account, so a step reads its
//! member's other tasks from the member item instead of the guards (run it once the upgraded
//! functions are all deployed: a task an older function opens afterwards is not added). Safe
//! to run while the functions run and to run again.
//!
//! `openloop-admin seal-secrets [ACCOUNT_ID…]`: seals, with `OPENLOOP_KMS_KEY_ID`, every
//! PushPress key and outbound webhook secret an earlier version stored in clear (each item is
//! written again over the version read; one written meanwhile was sealed by its own write).
//! Safe while the functions run and to run again.

use openloop_core::kernel::error::StoreError;
use openloop_core::kernel::ids::AccountId;
use openloop_core::ports::{AccountStore as _, WebhookStore as _};
use openloop_edge::config::Config;

const USAGE: &str = "usage: openloop-admin backfill-tallies|seal-secrets [ACCOUNT_ID...]";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run(std::env::args().skip(1).collect()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("openloop-admin: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Vec<String>) -> Result<(), String> {
    let Some((command, rest)) = args.split_first() else {
        return Err(USAGE.into());
    };
    if command != "backfill-tallies" && command != "seal-secrets" {
        return Err(format!("unknown command {command:?}; {USAGE}"));
    }
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let clients = config.clients().await;
    if command == "seal-secrets" && config.kms_key_id.is_none() {
        return Err("seal-secrets needs OPENLOOP_KMS_KEY_ID (the stack's SecretsKey)".into());
    }
    let store = openloop_aws::dynamo::DynamoStore::new(clients.dynamodb.clone(), config.table.clone())
        .with_keyring(openloop_edge::config::keyring(&config, &clients));
    let accounts: Vec<AccountId> = if rest.is_empty() {
        store
            .list_accounts()
            .await
            .map_err(|e| with_causes(&e))?
            .into_iter()
            .map(|a| a.id)
            .collect()
    } else {
        rest.iter()
            .map(|id| id.parse().map_err(|_| format!("{id:?} is not an account id")))
            .collect::<Result<_, _>>()?
    };
    if command == "seal-secrets" {
        for account in accounts {
            let sealed = seal_secrets(&store, account)
                .await
                .map_err(|e| format!("{account}: {}", with_causes(&e)))?;
            println!("{account}: {sealed} secrets sealed");
        }
        return Ok(());
    }
    for account in accounts {
        let (tallied, moved) = store
            .backfill_tallies(account)
            .await
            .map_err(|e| format!("{account}: {}", with_causes(&e)))?;
        println!("{account}: {tallied} tasks tallied, {moved} written meanwhile (tallied by their own write)");
        let members = store
            .backfill_member_open_tasks(account)
            .await
            .map_err(|e| format!("{account}: {}", with_causes(&e)))?;
        println!("{account}: the open tasks of {members} members kept on their items");
    }
    Ok(())
}

/// The account's and its endpoints' secrets still in clear, sealed by writing their items
/// again (the store seals what it writes); an item written meanwhile is left to its own write.
async fn seal_secrets(store: &openloop_aws::dynamo::DynamoStore, account: AccountId) -> Result<usize, StoreError> {
    let mut sealed = 0;
    if let Some(mut stored) = store.get_account(account).await?
        && stored.pushpress.as_ref().is_some_and(|c| !c.api_key().is_sealed())
    {
        stored.version += 1;
        match store.save_account(&stored).await {
            Ok(()) => sealed += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    for mut endpoint in store.list_endpoints(account).await? {
        if endpoint.secret.is_sealed() {
            continue;
        }
        endpoint.version += 1;
        match store.save_endpoint(&endpoint).await {
            Ok(()) => sealed += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(sealed)
}

/// An error and what caused it, as one line (the store's "unavailable" says why).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
