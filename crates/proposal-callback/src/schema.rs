// @generated automatically by Diesel CLI.

pub mod proposal {
    diesel::table! {
        proposal.applied_callbacks (tenant_id, insurer, dedup_key) {
            tenant_id -> Text,
            insurer -> Text,
            dedup_key -> Text,
            proposal_id -> Int8,
            receipt_id -> Nullable<Int8>,
            status -> Text,
            created_at -> Timestamptz,
        }
    }

    diesel::table! {
        proposal.auth_failures (client) {
            client -> Text,
            window_start -> Timestamptz,
            failures -> Int4,
        }
    }

    diesel::table! {
        proposal.callback_receipts (id) {
            id -> Int8,
            tenant_id -> Text,
            insurer -> Text,
            integration_id -> Nullable<Int8>,
            received_at -> Timestamptz,
            headers -> Jsonb,
            body -> Bytea,
            body_sha256 -> Bytea,
            status -> Text,
            http_status -> Nullable<Int2>,
            error_code -> Nullable<Text>,
            error_detail -> Nullable<Text>,
            proposal_id -> Nullable<Text>,
            dedup_key -> Nullable<Text>,
            attempts -> Int4,
            processed_at -> Nullable<Timestamptz>,
            event_at -> Nullable<Timestamptz>,
            body_erased_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        proposal.console_sessions (id_hash) {
            id_hash -> Bytea,
            tenant_id -> Text,
            subject -> Text,
            role -> Text,
            created_at -> Timestamptz,
            last_seen_at -> Timestamptz,
            expires_at -> Timestamptz,
            revoked_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        proposal.email_outbox (id) {
            id -> Int8,
            proposal_id -> Nullable<Int8>,
            history_id -> Nullable<Int8>,
            recipient -> Text,
            subject -> Text,
            body -> Text,
            status -> Text,
            attempts -> Int4,
            next_attempt_at -> Timestamptz,
            last_error -> Nullable<Text>,
            created_at -> Timestamptz,
            sent_at -> Nullable<Timestamptz>,
            html_body -> Nullable<Text>,
            failed_at -> Nullable<Timestamptz>,
            message_id -> Nullable<Text>,
            from_name -> Nullable<Text>,
            from_address -> Nullable<Text>,
            reply_to -> Nullable<Text>,
        }
    }

    diesel::table! {
        proposal.integration_history (id) {
            id -> Int8,
            proposal_id -> Int8,
            insurer -> Text,
            receipt_id -> Nullable<Int8>,
            from_status -> Text,
            to_status -> Text,
            insurer_event_id -> Nullable<Text>,
            insurer_note -> Nullable<Text>,
            insurer_time -> Nullable<Timestamptz>,
            created_at -> Timestamptz,
        }
    }

    diesel::table! {
        proposal.integration_silences (id) {
            id -> Int8,
            integration_id -> Int8,
            since -> Timestamptz,
            flagged_at -> Timestamptz,
            threshold_seconds -> Float8,
            usual_gap_seconds -> Float8,
            learned_from -> Text,
            samples -> Int4,
            ended_at -> Nullable<Timestamptz>,
            cleared_at -> Nullable<Timestamptz>,
            alert_email_id -> Nullable<Int8>,
            resume_email_id -> Nullable<Int8>,
        }
    }

    diesel::table! {
        proposal.integrations (id) {
            id -> Int8,
            tenant_id -> Text,
            insurer -> Text,
            environment -> Text,
            is_callback_active -> Bool,
            created_at -> Timestamptz,
            callback_registered_at -> Nullable<Timestamptz>,
            paused_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        proposal.proposal_events (id) {
            id -> Int8,
            proposal_id -> Int8,
            kind -> Text,
            receipt_id -> Nullable<Int8>,
            data -> Jsonb,
            created_at -> Timestamptz,
        }
    }

    diesel::table! {
        proposal.proposals (id) {
            id -> Int8,
            tenant_id -> Text,
            proposal_id -> Text,
            status -> Text,
            contact_email -> Text,
            in_queue -> Bool,
            created_at -> Timestamptz,
            updated_at -> Timestamptz,
            last_event_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        proposal.registration_attempts (id) {
            id -> Int8,
            integration_id -> Int8,
            started_at -> Timestamptz,
            finished_at -> Timestamptz,
            outcome -> Text,
            insurer_status -> Nullable<Int2>,
            detail -> Nullable<Text>,
            admin -> Text,
        }
    }

    diesel::table! {
        proposal.tenants (id) {
            id -> Text,
            name -> Text,
            created_at -> Timestamptz,
            body_retention_days -> Int4,
            operator_email -> Nullable<Text>,
            from_name -> Nullable<Text>,
            from_address -> Nullable<Text>,
            reply_to -> Nullable<Text>,
            time_zone -> Text,
        }
    }

    diesel::table! {
        proposal.tokens (id) {
            id -> Int8,
            integration_id -> Int8,
            token_type -> Text,
            token_hash -> Bytea,
            created_at -> Timestamptz,
            revoked_at -> Nullable<Timestamptz>,
            activated_at -> Nullable<Timestamptz>,
        }
    }

    diesel::joinable!(applied_callbacks -> callback_receipts (receipt_id));
    diesel::joinable!(applied_callbacks -> proposals (proposal_id));
    diesel::joinable!(callback_receipts -> tenants (tenant_id));
    diesel::joinable!(email_outbox -> integration_history (history_id));
    diesel::joinable!(email_outbox -> proposals (proposal_id));
    diesel::joinable!(integration_history -> callback_receipts (receipt_id));
    diesel::joinable!(integration_history -> proposals (proposal_id));
    diesel::joinable!(integration_silences -> integrations (integration_id));
    diesel::joinable!(integrations -> tenants (tenant_id));
    diesel::joinable!(proposal_events -> callback_receipts (receipt_id));
    diesel::joinable!(proposal_events -> proposals (proposal_id));
    diesel::joinable!(proposals -> tenants (tenant_id));
    diesel::joinable!(registration_attempts -> integrations (integration_id));
    diesel::joinable!(tokens -> integrations (integration_id));

    diesel::allow_tables_to_appear_in_same_query!(
        applied_callbacks,
        auth_failures,
        callback_receipts,
        console_sessions,
        email_outbox,
        integration_history,
        integration_silences,
        integrations,
        proposal_events,
        proposals,
        registration_attempts,
        tenants,
        tokens,
    );
}
