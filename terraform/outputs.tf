output "service_urls" {
  description = "Cloud Run URL of each function, by FUNCTION_TARGET. Reachable only from inside the project, with an identity token of the function's invoker."
  value       = { for k, s in google_cloud_run_v2_service.function : k => s.uri }
}

output "service_names" {
  description = "Cloud Run service name of each function, by FUNCTION_TARGET."
  value       = { for k, f in local.functions : k => f.service }
}

output "bucket_names" {
  description = "Bucket names by role: landing (ERP exports), quarantine (rejected rows), staging (load files), build (hand-submitted build sources)."
  value       = { for k, b in google_storage_bucket.bucket : k => b.name }
}

output "runtime_service_accounts" {
  description = "Email of each function's runtime service account, by FUNCTION_TARGET."
  value       = { for k, sa in google_service_account.function : k => sa.email }
}

output "invoker_service_accounts" {
  description = "Email of the identity allowed to invoke each function (Eventarc trigger, Pub/Sub push, Scheduler), by FUNCTION_TARGET."
  value       = { for k, sa in google_service_account.invoker : k => sa.email }
}

output "dataset" {
  description = "Fully qualified BigQuery dataset (project:dataset), for `bq query`."
  value       = "${var.project_id}:${google_bigquery_dataset.analytics.dataset_id}"
}

output "orders_topic" {
  description = "Topic the web application publishes orders to (attribute momento_evento)."
  value       = google_pubsub_topic.orders.name
}

output "dead_letter_subscription" {
  description = "Pull subscription holding dead-lettered orders."
  value       = google_pubsub_subscription.dead_letter.name
}

output "image_repository" {
  description = "Docker repository to push the server image to."
  value       = "${google_artifact_registry_repository.images.location}-docker.pkg.dev/${var.project_id}/${google_artifact_registry_repository.images.repository_id}"
}

output "deployer_service_account" {
  description = "Identity the Cloud Build pipeline runs as (cloudbuild.yaml serviceAccount): pushes images and rolls the four services forward, nothing else."
  value       = google_service_account.deployer.email
}

output "dashboard_url" {
  description = "Cloud Monitoring console URL of the alpipe dashboard (files, rejected rows, stream lag, orders accepted per minute, dropped and dead-lettered orders, ERROR log lines)."
  # The dashboard's ID is projects/<number>/dashboards/<dashboard ID>.
  value = "https://console.cloud.google.com/monitoring/dashboards/builder/${regex("[^/]+$", google_monitoring_dashboard.alpipe.id)}?project=${var.project_id}"
}
