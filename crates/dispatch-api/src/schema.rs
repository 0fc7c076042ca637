// @generated automatically by Diesel CLI.

pub mod dispatch {
    diesel::table! {
        dispatch.bases (name) {
            name -> Text,
            city -> Text,
            lat -> Float8,
            lon -> Float8,
        }
    }

    diesel::table! {
        dispatch.calls (call_id) {
            call_id -> Text,
            caller -> Nullable<Text>,
            called -> Text,
            prank_calls -> Int4,
            rang_at -> Timestamptz,
            answered_at -> Nullable<Timestamptz>,
            answered_by -> Nullable<Text>,
            answered_user_id -> Nullable<Int8>,
            ended_at -> Nullable<Timestamptz>,
            outcome -> Nullable<Text>,
            incident_id -> Nullable<Int8>,
        }
    }

    diesel::table! {
        dispatch.dispatches (id) {
            id -> Int8,
            incident_id -> Int8,
            mobile_unit_id -> Int8,
            status -> Text,
            destination_id -> Nullable<Int8>,
            assigned_by -> Int8,
            assigned_at -> Timestamptz,
            en_route_at -> Nullable<Timestamptz>,
            on_scene_at -> Nullable<Timestamptz>,
            transporting_at -> Nullable<Timestamptz>,
            at_destination_at -> Nullable<Timestamptz>,
            released_at -> Nullable<Timestamptz>,
            handed_over_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        dispatch.employees (id) {
            id -> Int8,
            user_id -> Int8,
            registration -> Text,
            phone -> Nullable<Text>,
            active -> Bool,
        }
    }

    diesel::table! {
        dispatch.fleet_history (id) {
            id -> Int8,
            mobile_unit_id -> Nullable<Int8>,
            user_id -> Nullable<Int8>,
            action -> Text,
            changes -> Jsonb,
            by_user_id -> Int8,
            at -> Timestamptz,
        }
    }

    diesel::table! {
        dispatch.health_units (id) {
            id -> Int8,
            cnes -> Text,
            name -> Text,
            city -> Text,
            uf -> Text,
            active -> Bool,
        }
    }

    diesel::table! {
        dispatch.idempotency_keys (user_id, key) {
            user_id -> Int8,
            key -> Text,
            route -> Text,
            request_hash -> Text,
            status -> Int2,
            body -> Jsonb,
            location -> Nullable<Text>,
            created_at -> Timestamptz,
        }
    }

    diesel::table! {
        dispatch.incident_history (id) {
            id -> Int8,
            incident_id -> Int8,
            version -> Int4,
            user_id -> Int8,
            at -> Timestamptz,
            action -> Text,
            changes -> Jsonb,
        }
    }

    diesel::table! {
        dispatch.incident_intercurrences (id) {
            id -> Int8,
            incident_id -> Int8,
            intercurrence_id -> Int4,
            notes -> Nullable<Text>,
            recorded_by -> Int8,
            recorded_at -> Timestamptz,
        }
    }

    diesel::table! {
        dispatch.incident_phase_hours (hour, priority) {
            hour -> Timestamptz,
            priority -> Text,
            calls -> Int4,
            call_taking_seconds -> Array<Nullable<Float8>>,
            call_taking_missing -> Int4,
            call_taking_out_of_order -> Int4,
            regulation_seconds -> Array<Nullable<Float8>>,
            regulation_missing -> Int4,
            regulation_out_of_order -> Int4,
            activation_seconds -> Array<Nullable<Float8>>,
            activation_missing -> Int4,
            activation_out_of_order -> Int4,
            response_seconds -> Array<Nullable<Float8>>,
            response_missing -> Int4,
            response_out_of_order -> Int4,
            total_seconds -> Array<Nullable<Float8>>,
            total_missing -> Int4,
            total_out_of_order -> Int4,
        }
    }

    diesel::table! {
        dispatch.incident_phases (incident_id) {
            incident_id -> Int8,
            call_received_at -> Timestamptz,
            priority -> Nullable<Text>,
            call_taking_status -> Text,
            call_taking_seconds -> Nullable<Float8>,
            regulation_status -> Text,
            regulation_seconds -> Nullable<Float8>,
            activation_status -> Text,
            activation_seconds -> Nullable<Float8>,
            activation_dispatch_id -> Nullable<Int8>,
            response_status -> Text,
            response_seconds -> Nullable<Float8>,
            response_dispatch_id -> Nullable<Int8>,
            total_status -> Text,
            total_seconds -> Nullable<Float8>,
            total_dispatch_id -> Nullable<Int8>,
        }
    }

    diesel::table! {
        dispatch.incidents (id) {
            id -> Int8,
            number -> Text,
            state -> Text,
            version -> Int4,
            created_by -> Int8,
            created_at -> Timestamptz,
            updated_at -> Timestamptz,
            caller_name -> Text,
            caller_phone -> Text,
            address -> Text,
            city -> Text,
            complaint -> Text,
            related_incident_id -> Nullable<Int8>,
            occurrence_type -> Nullable<Text>,
            priority -> Nullable<Text>,
            occurrence_notes -> Nullable<Text>,
            patient_name -> Nullable<Text>,
            patient_age -> Nullable<Int4>,
            patient_sex -> Nullable<Text>,
            regulator_id -> Nullable<Int8>,
            assigned_to_id -> Nullable<Int8>,
            regulated_at -> Nullable<Timestamptz>,
            conclusion -> Nullable<Text>,
            closed_at -> Nullable<Timestamptz>,
            caller_phone_key -> Text,
            destination_health_unit_id -> Nullable<Int8>,
            search_text -> Nullable<Text>,
            call_received_at -> Timestamptz,
            submitted_at -> Nullable<Timestamptz>,
            location_lat -> Nullable<Float8>,
            location_lon -> Nullable<Float8>,
            waiting_since -> Timestamptz,
        }
    }

    diesel::table! {
        dispatch.intercurrences (id) {
            id -> Int4,
            name -> Text,
            active -> Bool,
            deleted -> Bool,
        }
    }

    diesel::table! {
        dispatch.mobile_unit_positions (mobile_unit_id) {
            mobile_unit_id -> Int8,
            lat -> Float8,
            lon -> Float8,
            recorded_at -> Timestamptz,
            received_at -> Timestamptz,
            reported_by -> Int8,
        }
    }

    diesel::table! {
        dispatch.mobile_unit_types (id) {
            id -> Int4,
            name -> Text,
            description -> Text,
            active -> Bool,
        }
    }

    diesel::table! {
        dispatch.mobile_units (id) {
            id -> Int8,
            name -> Text,
            plate -> Text,
            type_id -> Int4,
            base -> Text,
            active -> Bool,
            team_id -> Nullable<Int4>,
        }
    }

    diesel::table! {
        dispatch.occurrence_types (id) {
            id -> Int4,
            name -> Text,
            active -> Bool,
        }
    }

    diesel::table! {
        dispatch.offload_alerts (dispatch_id) {
            dispatch_id -> Int8,
            health_unit_id -> Nullable<Int8>,
            at_destination_at -> Timestamptz,
            target_seconds -> Int4,
            alerted_at -> Timestamptz,
            cleared_at -> Nullable<Timestamptz>,
            cleared_by -> Nullable<Text>,
        }
    }

    diesel::table! {
        dispatch.page_sessions (id_hash) {
            id_hash -> Bytea,
            user_id -> Int8,
            profile -> Text,
            created_at -> Timestamptz,
            last_seen_at -> Timestamptz,
            expires_at -> Timestamptz,
            revoked_at -> Nullable<Timestamptz>,
        }
    }

    diesel::table! {
        dispatch.patient_access_batches (id) {
            id -> Int8,
            first_at -> Timestamptz,
            last_at -> Timestamptz,
            incident_ids -> Array<Nullable<Int8>>,
            user_ids -> Array<Nullable<Int8>>,
            routes -> Array<Nullable<Text>>,
            ats -> Array<Nullable<Timestamptz>>,
        }
    }

    diesel::table! {
        dispatch.prank_calls (id) {
            id -> Int8,
            phone -> Text,
            incident_id -> Int8,
            recorded_by -> Int8,
            recorded_at -> Timestamptz,
            phone_key -> Text,
            incident_number -> Text,
        }
    }

    diesel::table! {
        dispatch.professional_types (id) {
            id -> Int4,
            name -> Text,
            active -> Bool,
        }
    }

    diesel::table! {
        dispatch.profiles (id) {
            id -> Int4,
            title -> Text,
            text -> Text,
        }
    }

    diesel::table! {
        dispatch.response_targets (phase, priority) {
            phase -> Text,
            priority -> Text,
            seconds -> Int4,
            source -> Text,
            updated_at -> Timestamptz,
            updated_by -> Nullable<Int8>,
        }
    }

    diesel::table! {
        dispatch.teams (id) {
            id -> Int4,
            name -> Text,
        }
    }

    diesel::table! {
        dispatch.technical_decision_actions (id) {
            id -> Int4,
            name -> Text,
            active -> Bool,
            deleted -> Bool,
        }
    }

    diesel::table! {
        dispatch.technical_decisions (id) {
            id -> Int8,
            incident_id -> Int8,
            action_id -> Int4,
            mobile_unit_type_id -> Nullable<Int4>,
            regulator_id -> Int8,
            notes -> Nullable<Text>,
            decided_at -> Timestamptz,
        }
    }

    diesel::table! {
        dispatch.unallocated (id) {
            id -> Int8,
            user_id -> Int8,
            reason -> Text,
            since -> Timestamptz,
        }
    }

    diesel::table! {
        dispatch.unit_phase_hours (hour, priority) {
            hour -> Timestamptz,
            priority -> Text,
            turnout_seconds -> Array<Nullable<Float8>>,
            turnout_missing -> Int4,
            turnout_out_of_order -> Int4,
            travel_seconds -> Array<Nullable<Float8>>,
            travel_missing -> Int4,
            travel_out_of_order -> Int4,
            on_scene_seconds -> Array<Nullable<Float8>>,
            on_scene_missing -> Int4,
            on_scene_out_of_order -> Int4,
            transport_seconds -> Array<Nullable<Float8>>,
            transport_missing -> Int4,
            transport_out_of_order -> Int4,
            hospital_hold_seconds -> Array<Nullable<Float8>>,
            hospital_hold_missing -> Int4,
            hospital_hold_out_of_order -> Int4,
            return_to_service_seconds -> Array<Nullable<Float8>>,
            return_to_service_missing -> Int4,
            return_to_service_out_of_order -> Int4,
        }
    }

    diesel::table! {
        dispatch.unit_phases (dispatch_id) {
            dispatch_id -> Int8,
            incident_id -> Int8,
            call_received_at -> Timestamptz,
            priority -> Nullable<Text>,
            mobile_unit_id -> Int8,
            health_unit_id -> Nullable<Int8>,
            turnout_status -> Text,
            turnout_seconds -> Nullable<Float8>,
            travel_status -> Text,
            travel_seconds -> Nullable<Float8>,
            on_scene_status -> Text,
            on_scene_seconds -> Nullable<Float8>,
            transport_status -> Text,
            transport_seconds -> Nullable<Float8>,
            hospital_hold_status -> Text,
            hospital_hold_seconds -> Nullable<Float8>,
            return_to_service_status -> Text,
            return_to_service_seconds -> Nullable<Float8>,
        }
    }

    diesel::table! {
        dispatch.users (id) {
            id -> Int8,
            login -> Text,
            descriptive_name -> Text,
            status -> Text,
            profile_id -> Int4,
            created_at -> Timestamptz,
            updated_at -> Timestamptz,
            professional_type_id -> Nullable<Int4>,
            team_id -> Nullable<Int4>,
        }
    }

    diesel::joinable!(calls -> incidents (incident_id));
    diesel::joinable!(calls -> users (answered_user_id));
    diesel::joinable!(dispatches -> health_units (destination_id));
    diesel::joinable!(dispatches -> incidents (incident_id));
    diesel::joinable!(dispatches -> mobile_units (mobile_unit_id));
    diesel::joinable!(dispatches -> users (assigned_by));
    diesel::joinable!(employees -> users (user_id));
    diesel::joinable!(fleet_history -> mobile_units (mobile_unit_id));
    diesel::joinable!(idempotency_keys -> users (user_id));
    diesel::joinable!(incident_history -> incidents (incident_id));
    diesel::joinable!(incident_history -> users (user_id));
    diesel::joinable!(incident_intercurrences -> incidents (incident_id));
    diesel::joinable!(incident_intercurrences -> intercurrences (intercurrence_id));
    diesel::joinable!(incident_intercurrences -> users (recorded_by));
    diesel::joinable!(incident_phases -> incidents (incident_id));
    diesel::joinable!(incidents -> health_units (destination_health_unit_id));
    diesel::joinable!(mobile_unit_positions -> mobile_units (mobile_unit_id));
    diesel::joinable!(mobile_unit_positions -> users (reported_by));
    diesel::joinable!(mobile_units -> mobile_unit_types (type_id));
    diesel::joinable!(mobile_units -> teams (team_id));
    diesel::joinable!(offload_alerts -> dispatches (dispatch_id));
    diesel::joinable!(offload_alerts -> health_units (health_unit_id));
    diesel::joinable!(page_sessions -> users (user_id));
    diesel::joinable!(prank_calls -> incidents (incident_id));
    diesel::joinable!(prank_calls -> users (recorded_by));
    diesel::joinable!(response_targets -> users (updated_by));
    diesel::joinable!(technical_decisions -> incidents (incident_id));
    diesel::joinable!(technical_decisions -> mobile_unit_types (mobile_unit_type_id));
    diesel::joinable!(technical_decisions -> technical_decision_actions (action_id));
    diesel::joinable!(technical_decisions -> users (regulator_id));
    diesel::joinable!(unallocated -> users (user_id));
    diesel::joinable!(unit_phases -> dispatches (dispatch_id));
    diesel::joinable!(unit_phases -> incidents (incident_id));
    diesel::joinable!(users -> professional_types (professional_type_id));
    diesel::joinable!(users -> profiles (profile_id));
    diesel::joinable!(users -> teams (team_id));

    diesel::allow_tables_to_appear_in_same_query!(
        bases,
        calls,
        dispatches,
        employees,
        fleet_history,
        health_units,
        idempotency_keys,
        incident_history,
        incident_intercurrences,
        incident_phase_hours,
        incident_phases,
        incidents,
        intercurrences,
        mobile_unit_positions,
        mobile_unit_types,
        mobile_units,
        occurrence_types,
        offload_alerts,
        page_sessions,
        patient_access_batches,
        prank_calls,
        professional_types,
        profiles,
        response_targets,
        teams,
        technical_decision_actions,
        technical_decisions,
        unallocated,
        unit_phase_hours,
        unit_phases,
        users,
    );
}
