DROP TABLE tenants;
