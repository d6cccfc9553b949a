project_id = "fixture-project"
image      = "example/server@sha256:0000"
