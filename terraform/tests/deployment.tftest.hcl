# A first deployment, then an infrastructure change, planned and applied by
# Terraform itself against a mock of the google provider (real schema and
# validators, fake computed values). Run by scripts/tf-check.sh, which also
# explains how the provider is found offline.
#
# Every service account gets its real-shaped email, member and name (the IAM
# resources validate them), distinct per account, so that an assertion
# comparing a trigger's identity with an account also proves it is the
# right one.

mock_provider "google" {
  mock_data "google_project" {
    defaults = { number = "123456789012" }
  }
  mock_data "google_storage_project_service_account" {
    defaults = {
      email_address = "service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
      member        = "serviceAccount:service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
    }
  }
}

# The dashboard's ID as the API gives it, for its console URL.
override_resource {
  target = google_monitoring_dashboard.alpipe
  values = { id = "projects/123456789012/dashboards/0f1e2d3c-alpipe" }
}

override_resource {
  target = google_service_account.function["IngestCSV"]
  values = {
    email  = "alpipe-ingest@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-ingest@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-ingest@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.function["AggregateOrders"]
  values = {
    email  = "alpipe-orders@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-orders@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-orders@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.function["AdvanceWatermark"]
  values = {
    email  = "alpipe-watermark@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-watermark@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-watermark@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.function["SweepLanding"]
  values = {
    email  = "alpipe-sweeper@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-sweeper@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-sweeper@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.invoker["IngestCSV"]
  values = {
    email  = "alpipe-ingest-trigger@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-ingest-trigger@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-ingest-trigger@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.invoker["AggregateOrders"]
  values = {
    email  = "alpipe-orders-push@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-orders-push@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-orders-push@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.invoker["AdvanceWatermark"]
  values = {
    email  = "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.invoker["SweepLanding"]
  values = {
    email  = "alpipe-sweeper-run@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-sweeper-run@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-sweeper-run@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

override_resource {
  target = google_service_account.deployer
  values = {
    email  = "alpipe-deployer@alpipe-dev-example.iam.gserviceaccount.com"
    member = "serviceAccount:alpipe-deployer@alpipe-dev-example.iam.gserviceaccount.com"
    name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-deployer@alpipe-dev-example.iam.gserviceaccount.com"
  }
}

variables {
  # As terraform/testdata/deployed.tfvars (and a channel, so that the
  # alerts notify someone): a dev environment, which the end of the test
  # destroys, as prevent_destroy anywhere in it would not let it.
  project_id                  = "alpipe-dev-example"
  environment                 = "dev"
  alert_notification_channels = ["projects/alpipe-dev-example/notificationChannels/1"]
  image                       = "europe-west1-docker.pkg.dev/alpipe-dev-example/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
}

run "first_deployment" {
  assert {
    condition     = output.dashboard_url == "https://console.cloud.google.com/monitoring/dashboards/builder/0f1e2d3c-alpipe?project=alpipe-dev-example"
    error_message = "dashboard_url ${output.dashboard_url}: want the console URL of the dashboard's ID in the project."
  }

  # The four functions, each a service of its own.
  assert {
    condition     = keys(google_cloud_run_v2_service.function) == ["AdvanceWatermark", "AggregateOrders", "IngestCSV", "SweepLanding"]
    error_message = "Services ${jsonencode(keys(google_cloud_run_v2_service.function))}, want the four functions."
  }

  # --- The services' environment is the data file the stack reads.
  assert {
    condition     = keys(google_cloud_run_v2_service.function) == keys(jsondecode(file("services.json")))
    error_message = "services.json describes ${jsonencode(keys(jsondecode(file("services.json"))))}, Terraform deploys ${jsonencode(keys(google_cloud_run_v2_service.function))}."
  }
  assert {
    condition = alltrue([for k, s in google_cloud_run_v2_service.function :
      { for e in s.template[0].containers[0].env : e.name => e.value } == jsondecode(file("services.json"))[k].env
    ])
    error_message = "A service's planned environment differs from services.json (update it to what Terraform deploys): ${jsonencode({ for k, s in google_cloud_run_v2_service.function : k => { for e in s.template[0].containers[0].env : e.name => e.value } })}"
  }
  assert {
    condition = alltrue([for k, s in google_cloud_run_v2_service.function :
      s.name == jsondecode(file("services.json"))[k].service &&
      s.template[0].timeout == jsondecode(file("services.json"))[k].timeout &&
      s.template[0].max_instance_request_concurrency == jsondecode(file("services.json"))[k].concurrency
    ])
    error_message = "A service's name, timeout or concurrency differs from services.json: ${jsonencode({ for k, s in google_cloud_run_v2_service.function : k => { service = s.name, timeout = s.template[0].timeout, concurrency = s.template[0].max_instance_request_concurrency } })}"
  }
  # --- The topology the stack (test/stack) replays is the data file
  # topology.json, as the environment is services.json: compared as JSON
  # text (jsonencode sorts keys and erases the difference between a map and
  # an object). Topics are named by their IDs, and the services an audience
  # or a push endpoint names are the keys (the function), both held to
  # their resources by the assertions below.
  assert {
    condition = jsonencode({
      project            = var.project_id
      region             = var.region
      firestore_database = google_firestore_database.state.name
      dataset            = google_bigquery_dataset.analytics.dataset_id
      buckets            = { for k, b in google_storage_bucket.bucket : k => b.name }
      topics             = [google_pubsub_topic.orders.name, google_pubsub_topic.dead_letter.name]
      push_subscriptions = [for k, s in google_pubsub_subscription.push : {
        function              = k
        name                  = s.name
        topic                 = { (google_pubsub_topic.orders.id) = google_pubsub_topic.orders.name, (google_pubsub_topic.dead_letter.id) = google_pubsub_topic.dead_letter.name }[s.topic]
        ack_deadline_seconds  = s.ack_deadline_seconds
        minimum_backoff       = s.retry_policy[0].minimum_backoff
        maximum_backoff       = s.retry_policy[0].maximum_backoff
        dead_letter_topic     = { (google_pubsub_topic.orders.id) = google_pubsub_topic.orders.name, (google_pubsub_topic.dead_letter.id) = google_pubsub_topic.dead_letter.name }[s.dead_letter_policy[0].dead_letter_topic]
        max_delivery_attempts = s.dead_letter_policy[0].max_delivery_attempts
        service_account_email = s.push_config[0].oidc_token[0].service_account_email
      }]
      pull_subscriptions = [{
        name                 = google_pubsub_subscription.dead_letter.name
        topic                = { (google_pubsub_topic.orders.id) = google_pubsub_topic.orders.name, (google_pubsub_topic.dead_letter.id) = google_pubsub_topic.dead_letter.name }[google_pubsub_subscription.dead_letter.topic]
        ack_deadline_seconds = google_pubsub_subscription.dead_letter.ack_deadline_seconds
      }]
      scheduler_jobs = [for k, j in merge(google_cloud_scheduler_job.tick, google_cloud_scheduler_job.sweep) : {
        function              = k
        name                  = j.name
        schedule              = j.schedule
        time_zone             = j.time_zone
        http_method           = j.http_target[0].http_method
        headers               = j.http_target[0].headers
        body                  = base64decode(j.http_target[0].body)
        attempt_deadline      = j.attempt_deadline
        retry_count           = j.retry_config[0].retry_count
        service_account_email = j.http_target[0].oidc_token[0].service_account_email
      }]
      storage_triggers = [for k, t in google_eventarc_trigger.storage : {
        function              = k
        name                  = t.name
        event_type            = { for c in t.matching_criteria : c.attribute => c.value }["type"]
        bucket                = { for c in t.matching_criteria : c.attribute => c.value }["bucket"]
        service_account_email = t.service_account
      }]
    }) == jsonencode(jsondecode(file("topology.json")))
    error_message = "topology.json differs from the plan; update it to this JSON (unwrapped by terraform test -json): ${jsonencode({
      project            = var.project_id
      region             = var.region
      firestore_database = google_firestore_database.state.name
      dataset            = google_bigquery_dataset.analytics.dataset_id
      buckets            = { for k, b in google_storage_bucket.bucket : k => b.name }
      topics             = [google_pubsub_topic.orders.name, google_pubsub_topic.dead_letter.name]
      push_subscriptions = [for k, s in google_pubsub_subscription.push : {
        function              = k
        name                  = s.name
        topic                 = { (google_pubsub_topic.orders.id) = google_pubsub_topic.orders.name, (google_pubsub_topic.dead_letter.id) = google_pubsub_topic.dead_letter.name }[s.topic]
        ack_deadline_seconds  = s.ack_deadline_seconds
        minimum_backoff       = s.retry_policy[0].minimum_backoff
        maximum_backoff       = s.retry_policy[0].maximum_backoff
        dead_letter_topic     = { (google_pubsub_topic.orders.id) = google_pubsub_topic.orders.name, (google_pubsub_topic.dead_letter.id) = google_pubsub_topic.dead_letter.name }[s.dead_letter_policy[0].dead_letter_topic]
        max_delivery_attempts = s.dead_letter_policy[0].max_delivery_attempts
        service_account_email = s.push_config[0].oidc_token[0].service_account_email
      }]
      pull_subscriptions = [{
        name                 = google_pubsub_subscription.dead_letter.name
        topic                = { (google_pubsub_topic.orders.id) = google_pubsub_topic.orders.name, (google_pubsub_topic.dead_letter.id) = google_pubsub_topic.dead_letter.name }[google_pubsub_subscription.dead_letter.topic]
        ack_deadline_seconds = google_pubsub_subscription.dead_letter.ack_deadline_seconds
      }]
      scheduler_jobs = [for k, j in merge(google_cloud_scheduler_job.tick, google_cloud_scheduler_job.sweep) : {
        function              = k
        name                  = j.name
        schedule              = j.schedule
        time_zone             = j.time_zone
        http_method           = j.http_target[0].http_method
        headers               = j.http_target[0].headers
        body                  = base64decode(j.http_target[0].body)
        attempt_deadline      = j.attempt_deadline
        retry_count           = j.retry_config[0].retry_count
        service_account_email = j.http_target[0].oidc_token[0].service_account_email
      }]
      storage_triggers = [for k, t in google_eventarc_trigger.storage : {
        function              = k
        name                  = t.name
        event_type            = { for c in t.matching_criteria : c.attribute => c.value }["type"]
        bucket                = { for c in t.matching_criteria : c.attribute => c.value }["bucket"]
        service_account_email = t.service_account
      }]
    })}"
  }
  # The values Terraform computes are those of its resources.
  assert {
    condition = alltrue([for k, s in google_cloud_run_v2_service.function : alltrue([for e in s.template[0].containers[0].env : e.value == {
      FUNCTION_TARGET    = k
      FIRESTORE_DATABASE = google_firestore_database.state.name
      BIGQUERY_DATASET   = google_bigquery_dataset.analytics.dataset_id
      BIGQUERY_LOCATION  = google_bigquery_dataset.analytics.location
      LANDING_BUCKET     = google_storage_bucket.bucket["landing"].name
      STAGING_BUCKET     = google_storage_bucket.bucket["staging"].name
      QUARANTINE_BUCKET  = google_storage_bucket.bucket["quarantine"].name
    }[e.name] if contains(["FUNCTION_TARGET", "FIRESTORE_DATABASE", "BIGQUERY_DATASET", "BIGQUERY_LOCATION", "LANDING_BUCKET", "STAGING_BUCKET", "QUARANTINE_BUCKET"], e.name)])])
    error_message = "A service's environment names another database, dataset or bucket than Terraform manages."
  }
  # The sweeper ingests exactly like IngestCSV, and both stream services see
  # identical settings.
  assert {
    condition = alltrue([for e in google_cloud_run_v2_service.function["IngestCSV"].template[0].containers[0].env :
      contains(google_cloud_run_v2_service.function["SweepLanding"].template[0].containers[0].env, e) if e.name != "FUNCTION_TARGET"
    ])
    error_message = "SweepLanding must get every setting of IngestCSV, with the same values."
  }
  assert {
    condition = (
      [for e in google_cloud_run_v2_service.function["AggregateOrders"].template[0].containers[0].env : e if e.name != "FUNCTION_TARGET"] ==
      [for e in google_cloud_run_v2_service.function["AdvanceWatermark"].template[0].containers[0].env : e if e.name != "FUNCTION_TARGET"]
    )
    error_message = "AggregateOrders and AdvanceWatermark get different settings."
  }

  # --- Timeouts: event-driven requests get Eventarc's 540 s, the push its ack
  # deadline, the tick one minute.
  assert {
    condition     = { for k, s in google_cloud_run_v2_service.function : k => s.template[0].timeout } == { AdvanceWatermark = "60s", AggregateOrders = "60s", IngestCSV = "540s", SweepLanding = "540s" }
    error_message = "Timeouts ${jsonencode({ for k, s in google_cloud_run_v2_service.function : k => s.template[0].timeout })}."
  }
  assert {
    condition     = google_cloud_run_v2_service.function["AggregateOrders"].template[0].timeout == "${google_pubsub_subscription.push["AggregateOrders"].ack_deadline_seconds}s"
    error_message = "AggregateOrders' timeout must be the push subscription's ack deadline."
  }

  # --- One identity per service, and one per trigger.
  assert {
    condition = alltrue([for k, s in google_cloud_run_v2_service.function :
    s.template[0].service_account == google_service_account.function[k].email])
    error_message = "Every service must run as its own runtime account (google_service_account.function[key])."
  }
  assert {
    condition = length(distinct(concat(
      [for sa in google_service_account.function : sa.account_id],
      [for sa in google_service_account.invoker : sa.account_id],
      [google_service_account.deployer.account_id],
    ))) == 9
    error_message = "The four runtime accounts, the four invokers and the deployer must be nine distinct accounts."
  }
  assert {
    condition     = keys(google_service_account.function) == keys(google_cloud_run_v2_service.function) && keys(google_service_account.invoker) == keys(google_cloud_run_v2_service.function)
    error_message = "Every service needs a runtime account and an invoker of its own."
  }
  assert {
    condition     = alltrue([for s in google_cloud_run_v2_service.function : s.ingress == "INGRESS_TRAFFIC_INTERNAL_ONLY" && !s.invoker_iam_disabled])
    error_message = "Services take internal traffic only, and calls must be authenticated (invoker IAM on)."
  }

  # --- The grants of each runtime account, and nothing else.
  assert {
    condition = { for k, g in google_project_iam_member.runtime : k => [g.role, g.member] } == {
      "IngestCSV/roles/bigquery.jobUser"    = ["roles/bigquery.jobUser", google_service_account.function["IngestCSV"].member]
      "SweepLanding/roles/bigquery.jobUser" = ["roles/bigquery.jobUser", google_service_account.function["SweepLanding"].member]
    }
    error_message = "Project grants of the runtime accounts: ${jsonencode({ for k, g in google_project_iam_member.runtime : k => g.role })}."
  }
  assert {
    condition = alltrue([for k, g in google_bigquery_dataset_iam_member.runtime :
    g.role == "roles/bigquery.dataEditor" && g.dataset_id == google_bigquery_dataset.analytics.dataset_id && g.member == google_service_account.function[split("/", k)[0]].member]) && length(google_bigquery_dataset_iam_member.runtime) == 4
    error_message = "Every runtime account gets dataEditor on the one dataset, and nothing else there."
  }
  assert {
    condition = { for k, g in google_storage_bucket_iam_member.runtime : k => [g.bucket, g.role, g.member] } == merge([for fn in ["IngestCSV", "SweepLanding"] : {
      "${fn}/landing"    = [google_storage_bucket.bucket["landing"].name, "roles/storage.objectViewer", google_service_account.function[fn].member]
      "${fn}/quarantine" = [google_storage_bucket.bucket["quarantine"].name, "roles/storage.objectUser", google_service_account.function[fn].member]
      "${fn}/staging"    = [google_storage_bucket.bucket["staging"].name, "roles/storage.objectUser", google_service_account.function[fn].member]
    }]...)
    error_message = "Bucket grants: only the two ingesting functions, objectViewer on landing (get and list), objectUser on quarantine and staging."
  }
  assert {
    condition = alltrue([for k, g in google_project_iam_member.firestore_user :
      g.role == "roles/datastore.user" && g.member == google_service_account.function[k].member &&
    g.condition[0].expression == "resource.name == \"projects/alpipe-dev-example/databases/${google_firestore_database.state.name}\""]) && length(google_project_iam_member.firestore_user) == 4
    error_message = "Every runtime account uses Firestore, through a grant narrowed to alpipe's own database."
  }

  # --- Only its trigger identity may invoke a service.
  assert {
    condition = alltrue([for k, g in google_cloud_run_v2_service_iam_member.invoker :
      g.role == "roles/run.invoker" && g.member == google_service_account.invoker[k].member &&
    g.name == google_cloud_run_v2_service.function[k].name]) && keys(google_cloud_run_v2_service_iam_member.invoker) == keys(google_cloud_run_v2_service.function)
    error_message = "Each service needs exactly one run.invoker grant, to its own invoker account."
  }
  assert {
    condition = alltrue([for g in google_cloud_run_v2_service_iam_member.deployer :
    g.role == google_project_iam_custom_role.image_deployer.name && g.member == google_service_account.deployer.member])
    error_message = "The deployer holds only its custom role on the services."
  }
  assert {
    condition = contains(google_project_iam_custom_role.image_deployer.permissions, "run.services.update") && length(setintersection(google_project_iam_custom_role.image_deployer.permissions, [
      "run.routes.invoke", "run.services.create", "run.services.delete", "run.services.setIamPolicy",
    ])) == 0
    error_message = "The deployer role rolls services forward (run.services.update) and cannot invoke, create, delete them or change who may invoke them."
  }
  # No public principal: every member of every grant is a service account.
  assert {
    condition = alltrue([for m in flatten([
      [for g in google_project_iam_member.runtime : g.member],
      [for g in google_project_iam_member.firestore_user : g.member],
      [for g in google_project_iam_member.trigger_event_receiver : g.member],
      google_project_iam_member.gcs_agent_pubsub_publisher.member,
      google_project_iam_member.deployer_log_writer.member,
      [for g in google_bigquery_dataset_iam_member.runtime : g.member],
      [for g in google_storage_bucket_iam_member.runtime : g.member],
      google_storage_bucket_iam_member.deployer_build_sources.member,
      [for g in google_cloud_run_v2_service_iam_member.invoker : g.member],
      [for g in google_cloud_run_v2_service_iam_member.deployer : g.member],
      [for g in google_service_account_iam_member.pubsub_token_creator : g.member],
      [for g in google_service_account_iam_member.deployer_act_as : g.member],
      google_pubsub_topic_iam_member.dead_letter_publisher.member,
      [for g in google_pubsub_subscription_iam_member.dead_letter_subscriber : g.member],
      google_artifact_registry_repository_iam_member.deployer_writer.member,
    ]) : startswith(m, "serviceAccount:") && !can(regex("(?i)all(authenticated)?users", m))])
    error_message = "Every grant goes to a service account: no allUsers or allAuthenticatedUsers."
  }

  # --- Push and scheduler calls carry an OIDC token of the invoker, for the
  # service's own URL.
  assert {
    condition     = keys(google_pubsub_subscription.push) == ["AggregateOrders"]
    error_message = "One push subscription, to AggregateOrders."
  }
  assert {
    condition = alltrue([for k, s in google_pubsub_subscription.push :
      s.push_config[0].push_endpoint == google_cloud_run_v2_service.function[k].uri &&
      s.push_config[0].oidc_token[0].service_account_email == google_service_account.invoker[k].email &&
      s.push_config[0].oidc_token[0].audience == google_cloud_run_v2_service.function[k].uri &&
    length(s.push_config[0].no_wrapper) == 0])
    error_message = "A push subscription must push to its service with an OIDC token of the service's invoker, audience the service URL, in the wrapped envelope (AggregateOrders reads messageId, attributes and deliveryAttempt)."
  }
  assert {
    condition     = keys(google_cloud_scheduler_job.tick) == ["AdvanceWatermark"] && keys(google_cloud_scheduler_job.sweep) == ["SweepLanding"]
    error_message = "One tick job (AdvanceWatermark) and one sweep job (SweepLanding)."
  }
  assert {
    condition = alltrue([for k, j in merge(google_cloud_scheduler_job.tick, google_cloud_scheduler_job.sweep) :
      j.http_target[0].http_method == "POST" &&
      j.http_target[0].uri == google_cloud_run_v2_service.function[k].uri &&
      j.http_target[0].oidc_token[0].service_account_email == google_service_account.invoker[k].email &&
      j.http_target[0].oidc_token[0].audience == google_cloud_run_v2_service.function[k].uri &&
      length(j.http_target[0].oauth_token) == 0 &&
    j.attempt_deadline == google_cloud_run_v2_service.function[k].template[0].timeout])
    error_message = "A scheduler job must POST to its service with an OIDC token of the service's invoker (not OAuth), with the service's timeout as its deadline."
  }
  assert {
    condition     = google_cloud_scheduler_job.sweep["SweepLanding"].schedule == "*/15 * * * *" && google_cloud_scheduler_job.tick["AdvanceWatermark"].schedule == "* * * * *"
    error_message = "The tick runs every minute, the sweep every 15 minutes."
  }
  assert {
    condition     = var.max_instances.SweepLanding == 1 && google_cloud_run_v2_service.function["SweepLanding"].template[0].max_instance_request_concurrency == 1
    error_message = "One sweep at a time: one instance, one request."
  }

  # --- Eventarc: finalized objects of the landing bucket, delivered by the
  # invoker, which may receive events and invoke.
  assert {
    condition     = keys(google_eventarc_trigger.storage) == ["IngestCSV"]
    error_message = "One storage trigger, to IngestCSV."
  }
  assert {
    condition = alltrue([for k, t in google_eventarc_trigger.storage :
      { for c in t.matching_criteria : c.attribute => c.value } == { type = "google.cloud.storage.object.v1.finalized", bucket = google_storage_bucket.bucket["landing"].name } &&
      t.service_account == google_service_account.invoker[k].email &&
    t.destination[0].cloud_run_service[0].service == google_cloud_run_v2_service.function[k].name])
    error_message = "The trigger must deliver the landing bucket's finalized objects to IngestCSV, as its invoker."
  }
  assert {
    condition = alltrue([for k, g in google_project_iam_member.trigger_event_receiver :
    g.role == "roles/eventarc.eventReceiver" && g.member == google_service_account.invoker[k].member])
    error_message = "The trigger identity needs roles/eventarc.eventReceiver."
  }
  assert {
    condition     = google_project_iam_member.gcs_agent_pubsub_publisher.role == "roles/pubsub.publisher" && google_project_iam_member.gcs_agent_pubsub_publisher.member == "serviceAccount:service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
    error_message = "The Cloud Storage service agent needs roles/pubsub.publisher for storage triggers."
  }
  assert {
    condition = alltrue([for k, g in google_service_account_iam_member.pubsub_token_creator :
      g.role == "roles/iam.serviceAccountTokenCreator" && g.service_account_id == google_service_account.invoker[k].name &&
    g.member == "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"]) && keys(google_service_account_iam_member.pubsub_token_creator) == ["AggregateOrders", "IngestCSV"]
    error_message = "The Pub/Sub service agent mints the tokens of the push and Eventarc invokers, and of no other account."
  }

  # --- alpipe's own Firestore database: never (default), which the web
  # application may use; its TTL policies, index exemptions and the
  # services' grant touch only it.
  assert {
    condition = (google_firestore_database.state.name == "alpipe" &&
      alltrue([for f in merge(google_firestore_field.payload, google_firestore_field.ttl) : f.database == google_firestore_database.state.name]) &&
    alltrue([for e in google_cloud_run_v2_service.function["IngestCSV"].template[0].containers[0].env : e.value == "alpipe" if e.name == "FIRESTORE_DATABASE"]))
    error_message = "The database, its fields and the services' FIRESTORE_DATABASE must all be alpipe's own database."
  }
  assert {
    condition     = alltrue([for f in google_firestore_field.payload : f.field == "json" && length(f.index_config) == 1 && length(f.index_config[0].indexes) == 0 && length(f.ttl_config) == 0])
    error_message = "The json payload field needs an empty index_config (all single-field indexes off) and no TTL."
  }
  assert {
    condition = (toset(keys(google_firestore_field.payload)) == toset(var.firestore_collection_groups) &&
    alltrue([for k, f in google_firestore_field.payload : f.collection == k]))
    error_message = "The json payload field is exempted in every group of var.firestore_collection_groups (test/deploy holds it to the groups the adapters write)."
  }
  # TTL on expire_at (docstore.Doc.ExpireAt) in the native-mode database,
  # at least in the groups whose documents the code writes with an expiry:
  # ledger locks, orders dedup, the tick lease, dead-letter dedup.
  assert {
    condition = (google_firestore_database.state.type == "FIRESTORE_NATIVE" &&
      length(setsubtract(["ledger_locks", "orders", "control", "seen"], keys(google_firestore_field.ttl))) == 0 &&
    alltrue([for k, f in google_firestore_field.ttl : f.collection == k && f.field == "expire_at" && length(f.ttl_config) == 1]))
    error_message = "TTL policies: expire_at, with a ttl_config, in each group of var.firestore_ttl_collection_groups (ledger_locks, orders, control and seen at least), of a FIRESTORE_NATIVE database."
  }

  # --- Dead letters: the policy on the push subscription, a pull
  # subscription that keeps them, and the Pub/Sub service agent's grants.
  assert {
    condition = alltrue([for s in google_pubsub_subscription.push :
      s.dead_letter_policy[0].dead_letter_topic == google_pubsub_topic.dead_letter.id &&
      s.dead_letter_policy[0].max_delivery_attempts >= 5 && s.dead_letter_policy[0].max_delivery_attempts <= 100 &&
    length(s.retry_policy) == 1])
    error_message = "The push subscription must dead-letter to the dead-letter topic after 5..100 attempts, with a retry policy spacing redeliveries."
  }
  assert {
    condition = (google_pubsub_subscription.dead_letter.topic == google_pubsub_topic.dead_letter.id &&
      length(google_pubsub_subscription.dead_letter.push_config) == 0 &&
    google_pubsub_subscription.dead_letter.expiration_policy[0].ttl == "")
    error_message = "Dead letters are kept in a pull subscription that never expires."
  }
  assert {
    condition = (google_pubsub_topic_iam_member.dead_letter_publisher.topic == google_pubsub_topic.dead_letter.id &&
      google_pubsub_topic_iam_member.dead_letter_publisher.role == "roles/pubsub.publisher" &&
    google_pubsub_topic_iam_member.dead_letter_publisher.member == "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com")
    error_message = "The Pub/Sub service agent must be able to publish to the dead-letter topic."
  }
  assert {
    condition = alltrue([for k, g in google_pubsub_subscription_iam_member.dead_letter_subscriber :
      g.subscription == google_pubsub_subscription.push[k].id && g.role == "roles/pubsub.subscriber" &&
    g.member == "serviceAccount:service-123456789012@gcp-sa-pubsub.iam.gserviceaccount.com"]) && keys(google_pubsub_subscription_iam_member.dead_letter_subscriber) == keys(google_pubsub_subscription.push)
    error_message = "The Pub/Sub service agent must be able to acknowledge on each push subscription, or it never forwards dead letters."
  }

  # --- BigQuery: every aggregation declared in internal/aggregation has its
  # panes table and its view, and nothing else does. The declarations are
  # read here as the services embed them, independently of the module's
  # locals; test/deploy holds both to the Go declarations and tables.
  assert {
    condition     = sort(keys(google_bigquery_table.view)) == sort([for f in fileset("../internal/aggregation/declarations", "*.json") : trimsuffix(f, ".json")]) && keys(google_bigquery_table.view) == ["sesiones_cliente", "ventas_hora_pais", "ventas_sku_hora_movil"]
    error_message = "Views ${jsonencode(keys(google_bigquery_table.view))}, want one per declaration: sesiones_cliente, ventas_hora_pais and ventas_sku_hora_movil."
  }
  assert {
    condition = sort(keys(google_bigquery_table.table)) == sort(concat(
      ["lineas_pedido", "opiniones", "pedidos_descartados", "ventas_diarias_sku"],
      [for f in fileset("../internal/aggregation/declarations", "*.json") : "${trimsuffix(f, ".json")}_paneles"],
    ))
    error_message = "Tables ${jsonencode(keys(google_bigquery_table.table))}, want the four fixed ones and <name>_paneles per declaration."
  }
  assert {
    condition = alltrue([for f in fileset("../internal/aggregation/declarations", "*.json") : (
      google_bigquery_table.table["${jsondecode(file("../internal/aggregation/declarations/${f}")).name}_paneles"].clustering == tolist([jsondecode(file("../internal/aggregation/declarations/${f}")).key]) &&
      google_bigquery_table.table["${jsondecode(file("../internal/aggregation/declarations/${f}")).name}_paneles"].time_partitioning[0].field == "window_start" &&
      google_bigquery_table.table["${jsondecode(file("../internal/aggregation/declarations/${f}")).name}_paneles"].time_partitioning[0].type == "DAY" &&
      [for c in jsondecode(google_bigquery_table.table["${jsondecode(file("../internal/aggregation/declarations/${f}")).name}_paneles"].schema) : c.name] ==
      concat(["aggregation", "window_start", "window_end", jsondecode(file("../internal/aggregation/declarations/${f}")).key, "importe", "pedidos", "unidades", "pane_index", "timing", "accumulation", "watermark", "emitted_at"],
      jsondecode(file("../internal/aggregation/declarations/${f}")).window.type == "session" ? ["merged_into"] : [])
    )])
    error_message = "Every panes table must be partitioned by day of window_start, clustered by its aggregation's key, with the columns of ventas_hora_pais_paneles, the key column named after the key, and merged_into for sessions."
  }
  assert {
    condition = alltrue([for k, v in google_bigquery_table.view : (
      v.table_id == k && v.view[0].use_legacy_sql == false &&
      strcontains(v.view[0].query, "FROM `alpipe-dev-example.alpinashop_analitica.${k}_paneles`") &&
      strcontains(v.view[0].query, "PARTITION BY aggregation, window_start, ${jsondecode(file("../internal/aggregation/declarations/${k}.json")).key} ORDER BY pane_index DESC") &&
      strcontains(v.view[0].query, "SUM(importe) OVER") == (jsondecode(file("../internal/aggregation/declarations/${k}.json")).accumulation == "DISCARDING")
    )])
    error_message = "Each view must read its own panes table, by its own key, in its declared accumulation mode (latest pane for ACCUMULATING, sum for DISCARDING)."
  }
  # ventas_hora_pais keeps the one schema it had: the template file itself.
  assert {
    condition     = jsondecode(google_bigquery_table.table["ventas_hora_pais_paneles"].schema) == jsondecode(file("../internal/warehouse/schema/ventas_hora_pais_paneles.json"))
    error_message = "ventas_hora_pais_paneles must keep the schema of internal/warehouse/schema/ventas_hora_pais_paneles.json."
  }
  assert {
    condition = (alltrue([for t in google_bigquery_table.table : t.time_partitioning[0].type == "DAY"]) &&
    alltrue([for k, t in google_bigquery_table.table : t.schema == file("../internal/warehouse/schema/${k}.json") if !endswith(k, "_paneles")]))
    error_message = "Every table is partitioned by day; a fixed table's schema is its internal/warehouse/schema file itself, byte for byte."
  }

  # --- module.json is what test/deploy compares with the Go code
  # (internal/warehouse, internal/aggregation, internal/contract and the
  # adapters' collections) and with the scripts (deploy.sh, cloudbuild.yaml),
  # as Terraform plans it: the variables' defaults, every table and each
  # view's SQL in both accumulation modes, normalised as test/deploy does
  # (comments dropped, whitespace collapsed).
  assert {
    condition = jsonencode({
      apis                            = sort(keys(google_project_service.api))
      artifact_repository             = var.artifact_repository
      region                          = var.region
      deployer_account_id             = google_service_account.deployer.account_id
      reject_codes                    = var.reject_codes
      firestore_collection_groups     = var.firestore_collection_groups
      firestore_ttl_collection_groups = var.firestore_ttl_collection_groups
      tables = { for k, t in google_bigquery_table.table : k => {
        partition = t.time_partitioning[0].field, clustering = t.clustering, schema = jsondecode(t.schema)
      } }
      views = { for k, v in google_bigquery_table.view : k => [for d in [jsondecode(file("../internal/aggregation/declarations/${k}.json"))] : {
        key          = d.key
        accumulation = d.accumulation
        sql = { for mode in ["ACCUMULATING", "DISCARDING"] : mode => trimspace(replace(replace(replace(replace(
          templatefile("sql/view_${lower(mode)}.sql", {
            project = var.project_id, dataset = google_bigquery_dataset.analytics.dataset_id,
            panes   = google_bigquery_table.table["${k}_paneles"].table_id, key = d.key, session = d.window.type == "session"
          }),
        "/--[^\\n]*/", " "), "/\\s+/", " "), "( ", "("), " )", ")")) }
      }][0] }
    }) == jsonencode(jsondecode(file("module.json")))
    error_message = "module.json differs from the plan: update it (the variables' defaults, the tables' layout and schemas, the views' declarations and SQL)."
  }
  assert {
    condition = alltrue([for k, v in google_bigquery_table.view : trimspace(replace(replace(replace(replace(v.view[0].query,
      "/--[^\\n]*/", " "), "/\\s+/", " "), "( ", "("), " )", ")")) ==
    jsondecode(file("module.json")).views[k].sql[jsondecode(file("module.json")).views[k].accumulation]])
    error_message = "A view's planned query is not module.json's SQL for its declared accumulation mode."
  }
}

# An infrastructure change: the same configuration, no image. It must plan
# no creation, replacement or deletion of a service, trigger, subscription or
# job. What a test can see of that plan:
#   - Its actions are not visible to assertions, and the mock provider does
#     not know which attributes force a replacement (that is the real
#     provider's plan logic, which a mock does not run): a changed name plans
#     as an update here. So the attributes that force a replacement (name,
#     location or region, topic) are asserted to be the deployed ones.
#   - An instance being created has an unknown id in the plan, one in the
#     state keeps its id: each id condition below could not be evaluated
#     (which fails the run) if a new instance appeared.
#   - The key sets rule out a deletion, and the planned image stays the one
#     deployed (ignore_changes), never the stand-in.
run "infrastructure_change" {
  command = plan

  variables {
    image = null
  }

  assert {
    condition = alltrue(flatten([
      [for s in google_cloud_run_v2_service.function : s.id != ""],
      [for t in google_eventarc_trigger.storage : t.id != ""],
      [for s in google_pubsub_subscription.push : s.id != ""],
      google_pubsub_subscription.dead_letter.id != "",
      google_pubsub_topic.orders.id != "",
      google_pubsub_topic.dead_letter.id != "",
      [for j in google_cloud_scheduler_job.tick : j.id != ""],
      [for j in google_cloud_scheduler_job.sweep : j.id != ""],
      [for g in google_cloud_run_v2_service_iam_member.invoker : g.id != ""],
    ]))
    error_message = "An apply without an image would create a service, trigger, subscription or job."
  }
  assert {
    condition = (keys(google_cloud_run_v2_service.function) == ["AdvanceWatermark", "AggregateOrders", "IngestCSV", "SweepLanding"] &&
      keys(google_eventarc_trigger.storage) == ["IngestCSV"] && keys(google_pubsub_subscription.push) == ["AggregateOrders"] &&
    keys(google_cloud_scheduler_job.tick) == ["AdvanceWatermark"] && keys(google_cloud_scheduler_job.sweep) == ["SweepLanding"])
    error_message = "Which services, triggers, subscriptions and jobs exist must not depend on var.image."
  }
  assert {
    condition     = { for k, s in google_cloud_run_v2_service.function : k => [s.name, s.location] } == { for k, f in jsondecode(file("services.json")) : k => [f.service, "europe-west1"] }
    error_message = "An apply without an image would rename or move a service (a replacement): ${jsonencode({ for k, s in google_cloud_run_v2_service.function : k => [s.name, s.location] })}"
  }
  assert {
    condition = (
      { for k, s in google_pubsub_subscription.push : k => [s.name, s.topic] } == { AggregateOrders = ["pedidos-nuevos-alpipe-orders", google_pubsub_topic.orders.id] } &&
      [google_pubsub_subscription.dead_letter.name, google_pubsub_subscription.dead_letter.topic] == ["pedidos-nuevos-dlq-sub", google_pubsub_topic.dead_letter.id] &&
      [google_pubsub_topic.orders.name, google_pubsub_topic.dead_letter.name] == ["pedidos-nuevos", "pedidos-nuevos-dlq"]
    )
    error_message = "An apply without an image would rename a topic or subscription, or move a subscription to another topic (a replacement, losing its backlog)."
  }
  assert {
    condition = (
      { for k, j in merge(google_cloud_scheduler_job.tick, google_cloud_scheduler_job.sweep) : k => [j.name, j.region] } == { AdvanceWatermark = ["alpipe-watermark-tick", "europe-west1"], SweepLanding = ["alpipe-sweeper", "europe-west1"] } &&
      { for k, t in google_eventarc_trigger.storage : k => [t.name, t.location] } == { IngestCSV = ["alpipe-ingest-finalized", "europe-west1"] }
    )
    error_message = "An apply without an image would rename or move a scheduler job or the Eventarc trigger (a replacement)."
  }
  assert {
    condition     = alltrue([for s in google_cloud_run_v2_service.function : s.template[0].containers[0].image == "europe-west1-docker.pkg.dev/alpipe-dev-example/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"])
    error_message = "An apply without an image must keep the image the services run (ignore_changes), never the stand-in."
  }
}
