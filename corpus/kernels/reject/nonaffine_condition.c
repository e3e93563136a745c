/* Rejected (non-affine condition): the branch depends on A[i], which both statements under it write. */
void relu_inplace(int n, double A[n], double B[n])
{
    for (int i = 0; i < n; i++)
        if (A[i] < 0.0) {
            A[i] = 0.0;
            B[i] = A[i];
        }
}
