//! Writes over HTTP as the client sends them, and the seeded ids they need.

use actix_web::http::Method;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::*;
use serde_json::{Value, json};

use crate::support::{Api, Reply};

pub struct W {
    pub api: Api,
}

impl W {
    pub async fn new() -> W {
        W {
            api: Api::new().await,
        }
    }

    /// [`W::new`] on a manual clock: every write records the clock's time.
    pub async fn at(clock: common::Clock) -> W {
        W {
            api: Api::at(clock).await,
        }
    }

    /// `method uri` as `login`, with `If-Match: "<version>"` when given and a JSON body.
    pub async fn call(
        &self,
        method: Method,
        uri: &str,
        login: &str,
        if_match: Option<i32>,
        body: Option<Value>,
    ) -> Reply {
        self.call_with(method, uri, login, if_match, body, &[])
            .await
    }

    pub async fn call_with(
        &self,
        method: Method,
        uri: &str,
        login: &str,
        if_match: Option<i32>,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap();
        let mut req = self
            .api
            .request(method, uri)
            .bearer_auth(self.api.token(login));
        if let Some(v) = if_match {
            req = req.header("If-Match", format!("\"{v}\""));
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        Reply::of(req.send().await.unwrap()).await
    }

    pub async fn post(&self, uri: &str, login: &str, v: Option<i32>, body: Value) -> Reply {
        self.call(Method::POST, uri, login, v, Some(body)).await
    }

    /// `unit` sent to the incident `id` at version `v` (as `frota`), which must succeed;
    /// returns the dispatch's id.
    pub async fn send_unit(&self, id: i64, v: i32, unit: i64) -> i64 {
        let uri = format!("/incident/{id}/dispatch");
        let r = self
            .post(&uri, "frota", Some(v), json!({"mobile_unit_id": unit}))
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        r.body["id"].as_i64().unwrap()
    }

    /// The unit of `dispatch` takes the step `status` (as `frota`), which must succeed.
    pub async fn unit_step(&self, dispatch: i64, status: &str) -> Reply {
        let uri = format!("/dispatch/{dispatch}/status");
        let r = self
            .post(&uri, "frota", None, json!({"status": status}))
            .await;
        assert_eq!(r.status.as_u16(), 200, "{status}: {}", r.body);
        r
    }

    /// A new incident (as `tarm`); returns (id, version).
    pub async fn create(&self) -> (i64, i32) {
        let r = self
            .post(
                "/incident",
                "tarm",
                None,
                json!({"caller_name": "Maria Souza", "caller_phone": "(12) 99100-4321",
                       "address": "Rua das Flores, 10", "complaint": "dor no peito"}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        (r.body["id"].as_i64().unwrap(), 1)
    }

    /// How many incidents there are (a refused write adds none).
    pub async fn incidents(&self) -> i64 {
        incidents::table
            .count()
            .get_result(&mut self.api.conn().await)
            .await
            .unwrap()
    }

    pub async fn version(&self, id: i64) -> i32 {
        incidents::table
            .find(id)
            .select(incidents::version)
            .first(&mut self.api.conn().await)
            .await
            .unwrap()
    }

    pub async fn state(&self, id: i64) -> String {
        incidents::table
            .find(id)
            .select(incidents::state)
            .first(&mut self.api.conn().await)
            .await
            .unwrap()
    }

    /// An active technical decision action, not deleted.
    pub async fn action(&self, usable: bool) -> i32 {
        let q = technical_decision_actions::table.select(technical_decision_actions::id);
        let mut conn = self.api.conn().await;
        if usable {
            q.filter(technical_decision_actions::active)
                .filter(technical_decision_actions::deleted.eq(false))
                .first(&mut conn)
                .await
                .unwrap()
        } else {
            q.filter(
                technical_decision_actions::active
                    .eq(false)
                    .or(technical_decision_actions::deleted),
            )
            .first(&mut conn)
            .await
            .unwrap()
        }
    }

    /// Active units with no dispatch that is not released.
    pub async fn free_units(&self) -> Vec<i64> {
        let busy = dispatches::table
            .filter(dispatches::status.ne("released"))
            .select(dispatches::mobile_unit_id);
        mobile_units::table
            .filter(mobile_units::active)
            .filter(mobile_units::id.ne_all(busy))
            .select(mobile_units::id)
            .order_by(mobile_units::id)
            .load(&mut self.api.conn().await)
            .await
            .unwrap()
    }

    pub async fn inactive_unit(&self) -> i64 {
        mobile_units::table
            .filter(mobile_units::active.eq(false))
            .select(mobile_units::id)
            .first(&mut self.api.conn().await)
            .await
            .unwrap()
    }

    /// Moves a new incident to `state` through the routes; returns (id, version).
    pub async fn incident_in(&self, state: &str) -> (i64, i32) {
        let (id, mut v) = self.create().await;
        let path = match state {
            "registering" => &[][..],
            "awaiting_regulation" => &["submit"][..],
            "regulated" => &["submit", "decide"][..],
            "dispatched" => &["submit", "decide", "dispatch"][..],
            "closed" => &["submit", "decide", "close"][..],
            "cancelled" => &["cancel"][..],
            "prank" => &["prank"][..],
            other => panic!("no path to {other}"),
        };
        for step in path {
            v = self.step(id, v, step).await;
        }
        assert_eq!(self.state(id).await, state);
        (id, v)
    }

    /// One action on the incident by its profile; returns the reply.
    pub async fn act(&self, id: i64, v: i32, action: &str) -> Reply {
        let uri = |a: &str| format!("/incident/{id}/{a}");
        match action {
            "submit" => self.post(&uri("submit"), "tarm", Some(v), json!({})).await,
            "decide" => {
                let a = self.action(true).await;
                self.post(
                    &uri("technical-decision"),
                    "regulador",
                    Some(v),
                    json!({"action_id": a, "notes": "USA"}),
                )
                .await
            }
            "dispatch" => {
                let unit = self.free_units().await[0];
                self.post(
                    &uri("dispatch"),
                    "frota",
                    Some(v),
                    json!({"mobile_unit_id": unit}),
                )
                .await
            }
            "close" => {
                self.post(
                    &uri("close"),
                    "regulador",
                    Some(v),
                    json!({"conclusion": "atendido"}),
                )
                .await
            }
            "cancel" => self.post(&uri("cancel"), "tarm", Some(v), json!({})).await,
            "prank" => {
                self.post(&uri("prank-call"), "tarm", Some(v), json!({}))
                    .await
            }
            other => panic!("unknown action {other}"),
        }
    }

    /// As [`Self::act`], which must succeed; a dispatch is released at once so the unit is
    /// free again. Returns the new version.
    pub async fn step(&self, id: i64, v: i32, action: &str) -> i32 {
        let r = self.act(id, v, action).await;
        assert!(r.status.is_success(), "{action}: {} {}", r.status, r.body);
        if action == "dispatch" {
            let d = r.body["id"].as_i64().unwrap();
            let r = self
                .post(
                    &format!("/dispatch/{d}/status"),
                    "frota",
                    None,
                    json!({"status": "released"}),
                )
                .await;
            assert_eq!(r.status.as_u16(), 200, "{}", r.body);
            return r.body["version"].as_i64().unwrap() as i32;
        }
        r.body["version"].as_i64().unwrap() as i32
    }
}
