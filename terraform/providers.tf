provider "google" {
  project = var.project_id
  region  = var.region

  # Every resource that takes labels gets these, so the bill can be split by
  # system ("What does it cost per month?").
  default_labels = {
    system     = "alpipe"
    managed_by = "terraform"
  }
}
