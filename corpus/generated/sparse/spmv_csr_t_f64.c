/*
 * transposed CSR product y[col[j]] += val[j] * x[i] (a scatter per row) (double).
 */
void spmv_csr_t_f64(int n, int m, int nnz, int rowptr[n + 1], int col[nnz], double val[nnz],
                    double x[n], double y[m])
{
    int i, j;

    for (i = 0; i < n; ++i)
        for (j = rowptr[i]; j < rowptr[i + 1]; ++j)
            y[col[j]] += val[j] * x[i];
}
