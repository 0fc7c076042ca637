// Tables of the `dispatch` schema (every connection's search_path points there).

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
    }
}

diesel::joinable!(users -> profiles (profile_id));
diesel::allow_tables_to_appear_in_same_query!(profiles, users);
