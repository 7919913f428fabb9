//! The throwaway Redis server: what it acknowledged under `appendfsync always` survives a
//! SIGKILL and a restart (and nothing does without persistence), its options reach the
//! server, and it leaves nothing behind.

use std::future::Future;
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::time::{Duration, Instant};

use kumo_testsite::services::{Appendfsync, Redis, RedisOptions};

/// Every test is bounded: a hung server fails it instead of hanging the suite.
async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f).await.expect("test took over 60 s")
}

async fn start(options: RedisOptions) -> Redis {
    Redis::start_with(options).await.unwrap_or_else(|e| panic!("cannot start Redis for the tests: {e}"))
}

/// The scheduler state letter of a process (`T` when stopped), from `/proc/PID/stat`.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Waits (up to 5 s) until the process is in `want` state or out of it.
fn wait_state(pid: u32, want: char, is: bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if (state(pid) == Some(want)) == is {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn acknowledged_writes_survive_a_kill_and_a_restart() {
    within(async {
        let mut redis = start(RedisOptions::default()).await;
        let dir = redis.dir().to_path_buf();
        let socket = dir.join("redis.sock");
        assert!(socket.exists(), "no socket at {}", socket.display());
        assert_eq!(redis.unix_url(), format!("redis+unix://{}", socket.display()));
        assert!(Path::new(redis.unix_url().trim_start_matches("redis+unix://")).is_absolute());
        assert_eq!(redis.url(), format!("redis://127.0.0.1:{}/0", redis.port()));

        assert_eq!(redis.command(&["SET", "k", "v"]).unwrap(), "OK");
        let policy = redis.command(&["CONFIG", "GET", "maxmemory-policy"]).unwrap();
        assert_eq!(policy, "maxmemory-policy\nnoeviction");
        assert_eq!(redis.command(&["CONFIG", "GET", "appendfsync"]).unwrap(), "appendfsync\nalways");

        let first = redis.pid().unwrap();
        redis.kill().unwrap();
        assert_eq!(redis.pid(), None);
        assert!(redis.command(&["PING"]).is_err(), "the killed server still answers");
        redis.restart().await.unwrap_or_else(|e| panic!("restart failed: {e}\n{}", redis.log()));
        assert_ne!(redis.pid(), Some(first));

        assert_eq!(redis.command(&["GET", "k"]).unwrap(), "v", "log:\n{}", redis.log());
        assert!(socket.exists());
        assert!(redis.info("persistence").unwrap().contains("aof_enabled:1"));
        assert_eq!(redis.command(&["GET", "missing"]).unwrap(), "(nil)");
        assert_eq!(redis.command(&["RPUSH", "l", "a", "b"]).unwrap(), "2");
        assert_eq!(redis.command(&["LRANGE", "l", "0", "-1"]).unwrap(), "a\nb");
        assert!(redis.command(&["NO-SUCH-COMMAND"]).unwrap().starts_with("-ERR"));

        drop(redis);
        assert!(!dir.exists(), "{} is left behind", dir.display());
    })
    .await
}

#[tokio::test]
async fn without_persistence_a_restart_comes_back_empty() {
    within(async {
        let mut redis = start(RedisOptions { appendonly: false, ..Default::default() }).await;
        assert_eq!(redis.command(&["SET", "k", "v"]).unwrap(), "OK");
        assert!(redis.info("persistence").unwrap().contains("aof_enabled:0"));
        redis.kill().unwrap();
        redis.restart().await.unwrap_or_else(|e| panic!("restart failed: {e}\n{}", redis.log()));
        assert_eq!(redis.command(&["GET", "k"]).unwrap(), "(nil)", "log:\n{}", redis.log());
        assert_eq!(redis.command(&["DBSIZE"]).unwrap(), "0");
    })
    .await
}

#[tokio::test]
async fn options_reach_the_server_and_a_taken_port_fails_the_restart() {
    within(async {
        let options = RedisOptions {
            appendfsync: Appendfsync::Everysec,
            maxmemory_policy: Some("allkeys-lru".into()),
            ..Default::default()
        };
        let mut redis = start(options).await;
        let policy = redis.command(&["CONFIG", "GET", "maxmemory-policy"]).unwrap();
        assert_eq!(policy, "maxmemory-policy\nallkeys-lru");
        assert_eq!(redis.command(&["CONFIG", "GET", "appendfsync"]).unwrap(), "appendfsync\neverysec");

        let pid = redis.pid().unwrap();
        redis.stop_process().unwrap();
        assert!(wait_state(pid, 'T', true), "SIGSTOP did not stop redis-server");
        redis.cont_process().unwrap();
        assert!(wait_state(pid, 'T', false), "SIGCONT did not resume redis-server");
        assert_eq!(redis.command(&["PING"]).unwrap(), "PONG");

        // A frozen server is killed all the same.
        redis.stop_process().unwrap();
        redis.kill().unwrap();
        assert!(redis.stop_process().is_err());
        let squatter = TcpListener::bind((Ipv4Addr::LOCALHOST, redis.port())).unwrap();
        let err = redis.restart().await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse, "{err}");
        drop(squatter);
        redis.restart().await.unwrap_or_else(|e| panic!("restart failed: {e}\n{}", redis.log()));
        assert_eq!(redis.command(&["PING"]).unwrap(), "PONG");

        // Restarting a running server kills it first.
        let before = redis.pid();
        redis.restart().await.unwrap();
        assert_ne!(redis.pid(), before);
        assert_eq!(redis.command(&["PING"]).unwrap(), "PONG");
    })
    .await
}
