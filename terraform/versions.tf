terraform {
  # 1.9 is the first release whose variable validations may refer to other
  # variables; the stream settings rely on it. It also covers the landing
  # bucket's import block (storage.tf): import blocks came in 1.5, variables
  # in their ID in 1.6 and for_each in 1.7.
  required_version = ">= 1.9.0"

  required_providers {
    google = {
      source = "hashicorp/google"
      # One major: 7.45 is the release the module is tested with (offline,
      # against its schema); a new major is an upgrade to make on purpose.
      version = "~> 7.45"
    }
  }

  # State lives in a versioned bucket created by scripts/deploy.sh before the
  # first `terraform init -backend-config=bucket=<project>-tfstate`. The
  # configuration is partial so that the same code serves any project.
  backend "gcs" {
    prefix = "alpipe"
  }
}
