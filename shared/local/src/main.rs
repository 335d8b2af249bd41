//! `openloop-local`: the whole system on one machine (`make run`), on the AWS emulator or,
//! with `OPENLOOP_LOCAL_PORTS=memory`, with every port in memory.

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    openloop_edge::runtime::build()?.block_on(run())
}

async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    openloop_edge::telemetry::init();
    let options = openloop_local::Options::from_env()?;
    let ports = match options.ports {
        openloop_local::Ports::Emulator => format!("emulator at {}", options.config.endpoint.clone().unwrap_or_default()),
        openloop_local::Ports::Memory => "every port in memory; nothing is kept".to_owned(),
    };
    let running = openloop_local::start(options).await?;
    let url = running.url();
    // Where it serves, for `make demo` in another terminal of the same
    // checkout (whatever port it took); removed when it stops.
    let noted = std::path::Path::new("target").is_dir() && std::fs::write(openloop_local::URL_FILE, format!("{url}\n")).is_ok();
    println!("Openloop is running ({ports})");
    println!("  owner API   {url}/api/v1/…");
    println!("  dashboard   {url}/app  (sign in at {url}/app/login with an account's api_token)");
    println!("  webhooks    {url}/webhooks/pushpress/{{account_id}}  {url}/webhooks/inbound-email");
    println!("  local       {url}/health  {url}/_local/clock  {url}/_local/run  {url}/_local/outbox");
    println!("  admin token {}", running.admin_token);
    println!("  inbound token {}", running.inbound_token);
    if let Some(base) = &running.pushpress_stand_in {
        println!(
            "  pushpress   {base}  a local stand-in with the demo gym's members: connect a gym with any API key starting `{}` (`local_demo`); `OPENLOOP_PUSHPRESS_BASE_URL=https://api.pushpress.com/v3 make run` uses the real PushPress",
            openloop_local::pushpress::STAND_IN_KEY_PREFIX
        );
    }
    println!("The first account (a gym): its api_token signs you in to the dashboard —");
    println!(
        "  curl -s -X POST {url}/api/v1/accounts -H 'Authorization: Bearer {}' -d '{{\"name\":\"My Gym\",\"timezone\":\"America/New_York\"}}'",
        running.admin_token
    );
    println!("  (or `make demo` in another terminal: it makes a demo gym and prints its token)");
    println!("Ctrl-C stops it.");
    tokio::signal::ctrl_c().await?;
    if noted {
        let _ = std::fs::remove_file(openloop_local::URL_FILE);
    }
    running.stop();
    Ok(())
}
