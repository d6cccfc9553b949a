# Production: AlpinaShop's project, whose buckets existed before alpipe.
# scripts/deploy.sh --project alpinashop-datos --env prod reads this file
# (and refuses any other project with it, or this project as dev). By hand:
#   terraform plan -var-file=env/prod.tfvars
project_id  = "alpinashop-datos"
environment = "prod"

# The ERP writes its exports to its own bucket: adopted (imported), never
# created or destroyed by Terraform.
landing_bucket       = "alpinashop-catalogo"
adopt_landing_bucket = true

# Names given before they were derived from the project; they stay.
quarantine_bucket = "alpinashop-cuarentena"
staging_bucket    = "alpinashop-alpipe-staging"
build_bucket      = "alpinashop-alpipe-build"

# The on-call channels every alert notifies: projects/alpinashop-datos/notificationChannels/N,
# as `gcloud beta monitoring channels list --project alpinashop-datos` names them.
# Production refuses an empty list (alerts that reach nobody are a silent
# failure): a plan fails until they are listed here.
alert_notification_channels = []
