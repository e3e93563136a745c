/* Rejected (pointer arithmetic): the vector is reached through *(p + i). */
void scale_through_pointer(int n, double alpha, double *p)
{
    for (int i = 0; i < n; i++)
        *(p + i) = alpha * *(p + i);
}
