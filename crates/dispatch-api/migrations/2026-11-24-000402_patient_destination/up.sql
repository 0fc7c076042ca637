-- The patient's destination: the health unit chosen in the Patient form (the `id` of
-- `GET /health-unit`), written by `PATCH /incident/{id}` (`destination_health_unit_id`).
-- A dispatch without a destination of its own goes where its incident's patient goes.
ALTER TABLE incidents
    ADD COLUMN destination_health_unit_id BIGINT REFERENCES health_units (id);
