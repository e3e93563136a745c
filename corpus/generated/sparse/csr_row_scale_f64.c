/*
 * row scaling of a CSR matrix in place, val[j] *= d[i] (double).
 */
void csr_row_scale_f64(int n, int m, int nnz, int rowptr[n + 1], int col[nnz], double val[nnz],
                       double d[n])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = rowptr[i]; j < rowptr[i + 1]; j++)
            val[j] *= d[i];
}
