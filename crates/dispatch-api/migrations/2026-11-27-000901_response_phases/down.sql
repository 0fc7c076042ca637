DROP TABLE dispatch.unit_phases;
DROP TABLE dispatch.incident_phases;
