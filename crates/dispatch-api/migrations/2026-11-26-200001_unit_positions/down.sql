DROP TABLE dispatch.fleet_history;
ALTER TABLE dispatch.mobile_units DROP COLUMN team_id;
DROP TABLE dispatch.mobile_unit_positions;
ALTER TABLE dispatch.incidents
    DROP CONSTRAINT incidents_location_both,
    DROP COLUMN location_lon,
    DROP COLUMN location_lat;
DROP TABLE dispatch.bases;
