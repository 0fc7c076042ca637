DELETE FROM dispatch.response_targets WHERE phase = 'ring_to_answer';
ALTER TABLE dispatch.response_targets DROP CONSTRAINT response_targets_phase_check;
ALTER TABLE dispatch.response_targets ADD CONSTRAINT response_targets_phase_check CHECK (phase IN
    ('call_taking', 'regulation', 'activation', 'turnout', 'travel', 'response',
     'on_scene', 'transport', 'hospital_hold', 'return_to_service', 'total'));
DROP TABLE dispatch.calls;
