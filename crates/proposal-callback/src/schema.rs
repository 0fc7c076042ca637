// Tables of the `proposal` schema (every connection's search_path points there).

diesel::table! {
    tenants (id) {
        id -> Text,
        name -> Text,
        created_at -> Timestamptz,
    }
}
