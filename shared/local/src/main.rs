//! `openloop-local`: the whole system on one machine against an AWS emulator (`make run`).

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    openloop_aws::telemetry::init();
    let options = openloop_local::Options::from_env()?;
    let endpoint = options.config.endpoint.clone().unwrap_or_default();
    let running = openloop_local::start(options).await?;
    let url = running.url();
    println!("Openloop is running (emulator at {endpoint})");
    println!("  owner API   {url}/api/v1/…");
    println!("  webhooks    {url}/webhooks/pushpress/{{account_id}}");
    println!("  local       {url}/health  {url}/_local/clock  {url}/_local/run  {url}/_local/outbox");
    println!("  admin token {}", running.admin_token);
    println!("Ctrl-C stops it.");
    tokio::signal::ctrl_c().await?;
    running.stop();
    Ok(())
}
