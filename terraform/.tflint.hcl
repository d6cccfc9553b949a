# tflint with its bundled Terraform-language rules only: the google ruleset
# plugin would have to be downloaded, and the checks must run offline.
# "all" also enables naming conventions, documented variables and outputs,
# typed variables and the standard module structure.
config {
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
