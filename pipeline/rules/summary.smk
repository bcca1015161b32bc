# Summary of the configured instances and hammings in the store.


rule summary:
    input:
        receipts=receipt_files(),
        instances=expand(instance_file("{name}"), name=NAMES),
    output:
        md=result_path("summary.md"),
        json=result_path("summary.json"),
    log:
        result_path("logs", "summary.log"),
    params:
        store=store_dir(),
        select=lambda wc, input: summary_selection(input.instances),
    shell:
        "e2store summary --store {params.store:q} {params.select} -o {output.md:q}"
        " -o {output.json:q} > {log:q} 2>&1"
