//! `mindgate demo`: a scripted trip-planning agent that exercises every feature
//! of the viewer within a minute — streamed model steps, a pre-announced tool
//! roster, parallel tool calls, a tool error that holds at the error gate (the
//! viewer arms pause-on-error by default), and a retried step.
//!
//! A held gate waits for the viewer, as in any instrumented app: press
//! Continue, Retry, Inject or Abort there. Every run ends (ok, error or
//! aborted) and [`run_demo`] returns once all have.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mindgate_protocol::NodeKind;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Aborted, DemoError};
use crate::{Client, Config, current_run, graph_hint, hint, step, tool};

/// Options of [`run_demo`].
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Viewer URL (`None`: environment, then `ws://127.0.0.1:4747/ingest`).
    pub url: Option<String>,
    /// How many runs (started a moment apart, running concurrently).
    pub runs: usize,
    /// Delay between streamed tokens.
    pub token_delay: Duration,
    /// How long to wait for the viewer before starting (runs replay on attach anyway).
    pub attach_timeout: Duration,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            url: None,
            runs: 1,
            token_delay: Duration::from_millis(25),
            attach_timeout: Duration::from_secs(2),
        }
    }
}

/// How one demo run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// The trip was booked.
    Ok,
    /// The agent gave up with an error (e.g. Continue at the error gate twice).
    Error,
    /// Aborted from the viewer.
    Aborted,
}

/// What [`run_demo`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoReport {
    /// The viewer URL used.
    pub url: String,
    /// Whether a viewer was attached when the runs started.
    pub attached: bool,
    /// How each run ended, in order.
    pub runs: Vec<RunEnd>,
}

/// The demo agent's error type: the SDK's abort, or a failing tool.
#[derive(Debug, thiserror::Error)]
pub enum TripError {
    /// Aborted from the viewer.
    #[error(transparent)]
    Aborted(#[from] Aborted),
    /// A tool failed.
    #[error("{0}")]
    Tool(String),
}

/// A flight offer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flight {
    /// Flight number.
    pub flight: String,
    /// Price in EUR.
    pub price: u32,
}

/// A hotel booking.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Booking {
    /// Hotel name.
    pub hotel: String,
    /// Confirmation code.
    pub confirmation: String,
}

/// Runs the demo on its own runtime and returns once every run has finished.
pub fn run_demo(
    options: DemoOptions,
    progress: impl Fn(&str) + Send + Sync + 'static,
) -> Result<DemoReport, DemoError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(DemoError::Runtime)?;
    runtime.block_on(async move {
        let mut config = Config::default().app("mindgate-demo");
        if let Some(url) = &options.url {
            config = config.url(url.clone());
        }
        let client = Client::new(config);
        let report = run_demo_with(&client, &options, Arc::new(progress)).await;
        client.shutdown(Duration::from_secs(2)).await;
        Ok(report)
    })
}

/// Runs the demo with an existing client (tests and embedding).
pub async fn run_demo_with(
    client: &Client,
    options: &DemoOptions,
    progress: Arc<dyn Fn(&str) + Send + Sync>,
) -> DemoReport {
    let attached = client.ready(options.attach_timeout).await;
    if attached {
        progress(&format!("viewer attached at {}", client.url()));
    } else if client.is_enabled() {
        progress(&format!(
            "no viewer at {} yet — running detached (start `mindgate serve`; runs replay on attach)",
            client.url()
        ));
    } else {
        progress("Mindgate is disabled by the environment; running without instrumentation");
    }
    let mut tasks = Vec::new();
    for i in 0..options.runs.max(1) {
        let client = client.clone();
        let progress = progress.clone();
        let delay = options.token_delay;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300 * i as u64)).await;
            let n = i + 1;
            progress(&format!("run {n}: planning a trip"));
            let out = client
                .run(
                    "plan-trip",
                    json!({"demo": true, "run": n, "traveller": "Ada"}),
                    trip(n, delay),
                )
                .await;
            let end = match &out {
                Ok(_) => RunEnd::Ok,
                Err(TripError::Aborted(_)) => RunEnd::Aborted,
                Err(_) => RunEnd::Error,
            };
            match out {
                Ok(summary) => progress(&format!("run {n}: ok — {summary}")),
                Err(e) => progress(&format!("run {n}: ended with {e}")),
            }
            end
        }));
    }
    let mut runs = Vec::with_capacity(tasks.len());
    for t in tasks {
        runs.push(t.await.unwrap_or(RunEnd::Error));
    }
    DemoReport {
        url: client.url().to_owned(),
        attached,
        runs,
    }
}

/// Streams `text` word by word into a model step.
async fn stream(ctx: &crate::NodeCtx, text: &str, delay: Duration) {
    for word in text.split_inclusive(' ') {
        ctx.token(word);
        tokio::time::sleep(delay).await;
    }
}

/// The three lookups the plan asks for, in parallel: flights, the weather, hotels.
async fn lookups(delay: Duration) -> Result<(Vec<Flight>, Value, Vec<String>), TripError> {
    let flights = tool("search_flights")
        .input(&json!({"from": "AMS", "to": "OSL", "date": "2025-06-14"}))
        .call(|_| async move {
            tokio::time::sleep(delay * 12).await;
            Ok::<_, TripError>(vec![
                Flight {
                    flight: "SK822".into(),
                    price: 139,
                },
                Flight {
                    flight: "KL1143".into(),
                    price: 171,
                },
            ])
        });
    let weather = tool("get_weather")
        .input(&json!({"city": "Oslo"}))
        .call(|_| async move {
            tokio::time::sleep(delay * 6).await;
            Ok::<_, TripError>(json!({"city": "Oslo", "forecast": "sunny", "high_c": 21}))
        });
    let hotels = tool("find_hotels")
        .input(&json!({"city": "Oslo", "near": "fjord"}))
        .call(|_| async move {
            tokio::time::sleep(delay * 9).await;
            Ok::<_, TripError>(vec!["The Thief".to_owned(), "Amerikalinjen".to_owned()])
        });
    let (flights, weather, hotels) = tokio::join!(flights, weather, hotels);
    Ok((flights?, weather?, hotels?))
}

/// A flaky tool: the first attempt of each run fails and holds at the error gate.
/// Retry in the viewer succeeds; Continue hands the error to the agent, which
/// retries the step itself; Inject supplies a booking; Abort ends the run.
async fn book_with_retry(n: usize, delay: Duration, hotel: String) -> Result<Booking, TripError> {
    let attempts = Arc::new(AtomicU32::new(0));
    let book = |attempts: Arc<AtomicU32>, hotel: String| {
        tool("book_hotel")
            .input(&json!({"hotel": hotel, "nights": 2}))
            .call(move |_| {
                let attempts = attempts.clone();
                let hotel = hotel.clone();
                async move {
                    tokio::time::sleep(delay * 4).await;
                    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
                        return Err(TripError::Tool(
                            "HotelApiError: 503 upstream timeout from booking provider".into(),
                        ));
                    }
                    Ok::<_, TripError>(Booking {
                        hotel,
                        confirmation: format!("OSL-{n:03}-{}", attempts.load(Ordering::SeqCst)),
                    })
                }
            })
    };
    match book(attempts.clone(), hotel.clone()).await {
        Ok(b) => Ok(b),
        Err(TripError::Aborted(a)) => Err(a.into()),
        Err(_first_failure) => {
            if current_run().is_some_and(|r| r.is_aborted()) {
                return Err(Aborted.into());
            }
            // The retried step: the agent tries once more on its own.
            book(attempts, hotel).await
        }
    }
}

async fn trip(n: usize, delay: Duration) -> Result<String, TripError> {
    graph_hint([
        hint(NodeKind::Tool, "search_flights"),
        hint(NodeKind::Tool, "get_weather"),
        hint(NodeKind::Tool, "find_hotels"),
        hint(NodeKind::Tool, "book_hotel"),
        hint(NodeKind::Tool, "send_confirmation"),
    ]);
    let request = "Plan a weekend in Oslo: cheapest flight, the weather, a hotel near the fjord.";

    // Step 1: the model plans (streamed, with reasoning and usage).
    let plan: String = step()
        .input(&json!({"messages": [{"role": "user", "content": request}]}))
        .call(|ctx| async move {
            ctx.reasoning("Three independent lookups: do them in parallel. ");
            stream(
                &ctx,
                "I'll search flights, check the weather and look for hotels at the same time.",
                delay,
            )
            .await;
            ctx.usage(412, 38);
            Ok::<_, TripError>("search_flights + get_weather + find_hotels".to_owned())
        })
        .await?;

    // Parallel tool calls.
    let (flights, weather, hotels) = lookups(delay).await?;

    // Step 2: the model picks.
    let hotel = hotels.first().cloned().unwrap_or_default();
    let flight = flights
        .iter()
        .min_by_key(|f| f.price)
        .map(|f| f.flight.clone())
        .unwrap_or_default();
    step()
        .input(&json!({"flights": flights, "weather": weather, "hotels": hotels, "plan": plan}))
        .call(|ctx| {
            let text = format!("Cheapest is {flight}; it will be sunny. Booking {hotel}.");
            async move {
                stream(&ctx, &text, delay).await;
                ctx.usage(655, 21);
                Ok::<_, TripError>(())
            }
        })
        .await?;

    let booking = book_with_retry(n, delay, hotel).await?;

    tool("send_confirmation")
        .input(&json!({"to": "ada@example.com", "booking": booking}))
        .call(|_| async move {
            tokio::time::sleep(delay * 2).await;
            Ok::<_, TripError>(json!({"sent": true}))
        })
        .await?;

    // Step 3: the final answer.
    let answer = format!(
        "Booked {} ({}) and flight {flight}. Enjoy Oslo!",
        booking.hotel, booking.confirmation
    );
    step()
        .call(|ctx| {
            let answer = answer.clone();
            async move {
                stream(&ctx, &answer, delay).await;
                ctx.usage(702, 19);
                Ok::<_, TripError>(answer)
            }
        })
        .await
}
