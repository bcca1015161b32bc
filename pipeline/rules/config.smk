# The config checked before anything else reads it: each config file for what YAML hides,
# then the config against schemas/config.schema.yaml (one line naming the key).

from snakemake.utils import validate


def check_config():
    """Each config file read first for what YAML hides (a key given twice, aliases that
    expand without end), then the config against its schema: one line naming the key."""
    from snakemake.exceptions import WorkflowError

    from e2store.campaign import check_config_file, schema_error_line
    from e2store.errors import E2StoreError

    try:
        for path in workflow.configfiles:
            check_config_file(path)
    except E2StoreError as e:
        raise WorkflowError(str(e)) from None
    try:
        validate(config, "../../schemas/config.schema.yaml")
    except WorkflowError as e:
        raise WorkflowError(schema_error_line(e)) from None


check_config()
