DROP TRIGGER intercurrences_changed ON intercurrences;
DROP TRIGGER technical_decision_actions_changed ON technical_decision_actions;
DROP TRIGGER professional_types_changed ON professional_types;
DROP TRIGGER mobile_unit_types_changed ON mobile_unit_types;
DROP TRIGGER health_units_changed ON health_units;
DROP FUNCTION notify_reference_changed();
DROP TABLE idempotency_keys;
