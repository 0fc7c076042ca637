// Tables of the `dispatch` schema (every connection's search_path points there). Written by
// hand to match the migrations exactly: there is no diesel CLI in this workspace.

diesel::table! {
    profiles (id) {
        id -> Int4,
        title -> Text,
        text -> Text,
    }
}

diesel::table! {
    users (id) {
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

diesel::table! {
    teams (id) {
        id -> Int4,
        name -> Text,
    }
}

diesel::table! {
    professional_types (id) {
        id -> Int4,
        name -> Text,
        active -> Bool,
    }
}

diesel::table! {
    employees (id) {
        id -> Int8,
        user_id -> Int8,
        registration -> Text,
        phone -> Nullable<Text>,
        active -> Bool,
    }
}

diesel::table! {
    mobile_unit_types (id) {
        id -> Int4,
        name -> Text,
        description -> Text,
        active -> Bool,
    }
}

diesel::table! {
    mobile_units (id) {
        id -> Int8,
        name -> Text,
        plate -> Text,
        type_id -> Int4,
        base -> Text,
        active -> Bool,
    }
}

diesel::table! {
    health_units (id) {
        id -> Int8,
        cnes -> Text,
        name -> Text,
        city -> Text,
        uf -> Text,
        active -> Bool,
    }
}

diesel::table! {
    technical_decision_actions (id) {
        id -> Int4,
        name -> Text,
        active -> Bool,
        deleted -> Bool,
    }
}

diesel::table! {
    intercurrences (id) {
        id -> Int4,
        name -> Text,
        active -> Bool,
        deleted -> Bool,
    }
}

diesel::table! {
    incidents (id) {
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
        search_text -> Text,
    }
}

diesel::table! {
    incident_history (id) {
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
    prank_calls (id) {
        id -> Int8,
        phone -> Text,
        phone_digits -> Text,
        incident_id -> Int8,
        recorded_by -> Int8,
        recorded_at -> Timestamptz,
    }
}

diesel::table! {
    technical_decisions (id) {
        id -> Int8,
        incident_id -> Int8,
        action_id -> Int4,
        mobile_unit_type_id -> Nullable<Int4>,
        regulator_id -> Int8,
        notes -> Text,
        decided_at -> Timestamptz,
    }
}

diesel::table! {
    dispatches (id) {
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
    }
}

diesel::table! {
    incident_intercurrences (id) {
        id -> Int8,
        incident_id -> Int8,
        intercurrence_id -> Int4,
        notes -> Text,
        recorded_by -> Int8,
        recorded_at -> Timestamptz,
    }
}

diesel::table! {
    unallocated (id) {
        id -> Int8,
        user_id -> Int8,
        reason -> Text,
        since -> Timestamptz,
    }
}

diesel::joinable!(users -> profiles (profile_id));
diesel::joinable!(users -> professional_types (professional_type_id));
diesel::joinable!(users -> teams (team_id));
diesel::joinable!(employees -> users (user_id));
diesel::joinable!(mobile_units -> mobile_unit_types (type_id));
diesel::joinable!(incident_history -> users (user_id));
diesel::joinable!(incident_history -> incidents (incident_id));
diesel::joinable!(prank_calls -> incidents (incident_id));
diesel::joinable!(technical_decisions -> incidents (incident_id));
diesel::joinable!(technical_decisions -> technical_decision_actions (action_id));
diesel::joinable!(technical_decisions -> mobile_unit_types (mobile_unit_type_id));
diesel::joinable!(technical_decisions -> users (regulator_id));
diesel::joinable!(dispatches -> incidents (incident_id));
diesel::joinable!(dispatches -> mobile_units (mobile_unit_id));
diesel::joinable!(dispatches -> health_units (destination_id));
diesel::joinable!(incident_intercurrences -> incidents (incident_id));
diesel::joinable!(incident_intercurrences -> intercurrences (intercurrence_id));
diesel::joinable!(unallocated -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    profiles,
    users,
    teams,
    professional_types,
    employees,
    mobile_unit_types,
    mobile_units,
    health_units,
    technical_decision_actions,
    intercurrences,
    incidents,
    incident_history,
    prank_calls,
    technical_decisions,
    dispatches,
    incident_intercurrences,
    unallocated,
);

diesel::define_sql_function! {
    /// The folded comparison key of every search (see the migration): lower case, no accents.
    fn search_key(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

diesel::define_sql_function! {
    /// Locale-independent name order: the folded name's UTF-8 bytes (see migration 000004).
    fn search_order(x: diesel::sql_types::Text) -> diesel::sql_types::Bytea;
}
